/**
 * The web console in a real browser (Debian's chromium through playwright-core), against runs
 * made by the real CLI in one folder of runs, and the console itself started as the real CLI:
 * the list with the right states, filtered to "waiting"; an approval from the page that the
 * waiting run takes up and finishes, shown live without a reload; a denial with a reason; the
 * refusals of a request without the token or from another origin (nothing changes); a live
 * page that goes on, missing no record, after the console restarts; and no response that holds
 * the API key the runs and the console were started with.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsole as startConsoleServer } from '../../src/console/console-server.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { REPO, runCliAsync, startCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freePort } from '../helpers/free-port.ts';

const ARTIFACTS = path.join(REPO, 'test', 'artifacts');
// A key of the real shape, made up (joined here so that no key-shaped text is committed).
const KEY = ['sk', 'ant', 'api03', 'console-test-key-never-shown-0123456789'].join('-');
const TOKEN = 'ana:console-test-secret-0123456789';
const ENV = { ANTHROPIC_API_KEY: KEY };

let browser: Browser;
let dir: string;
let port: number;
let consoleProcess: ReturnType<typeof startCli> | null = null;
let origin: string;
const bodies: Array<{ url: string; body: string }> = [];
const children: Array<ReturnType<typeof startCli>> = [];

async function startConsole(): Promise<string> {
  const started = startCli(['console', '--dir', dir, '--port', String(port)], { cwd: dir, env: { ...ENV, DURABLE_AGENT_CONSOLE_TOKEN: TOKEN } });
  consoleProcess = started;
  let stderr = '';
  started.child.stderr.on('data', (chunk: Buffer | string) => (stderr += String(chunk)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const url = /\[console\] (http:\S+)/.exec(started.output())?.[1];
    if (url) return url;
    if (Date.now() > deadline || started.child.exitCode !== null) throw new Error(`the console did not start: ${started.output()}${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function stopConsole(): Promise<void> {
  const running = consoleProcess!;
  running.child.kill('SIGINT');
  const done = await running.done;
  expect(done.code, done.stderr).toBe(0);
  consoleProcess = null;
}

async function openPage(url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('response', async (response) => {
    try {
      bodies.push({ url: response.url(), body: await response.text() });
    } catch {
      // A live stream cut by a restart has no body to read.
    }
  });
  await page.goto(url);
  return page;
}

async function keyOf(page: Page, runId: string): Promise<string> {
  const row = page.locator(`tr.run-row[data-run="${runId}"] a`);
  await row.waitFor();
  return decodeURIComponent((await row.getAttribute('href'))!.replace('/runs/', ''));
}

function filesIn(folder: string): string[] {
  return fs.existsSync(folder) ? fs.readdirSync(folder) : [];
}

/** fetch() sets Host itself: node:http sends the one given. */
function statusOf(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers }, (response) => {
      response.resume();
      resolve(response.statusCode!);
    });
    request.once('error', reject);
  });
}

function demo(run: string, ...more: string[]) {
  return runCliAsync(['demo', '--run', run, ...more], { cwd: dir, env: ENV });
}

beforeAll(async () => {
  dir = tempDir('da-console-');
  port = await freePort();
  const [done, waiting] = await Promise.all([demo('done-1'), demo('wait-1', '--require-approval', 'write_report', '--no-wait')]);
  expect(done.code, done.stderr).toBe(0);
  expect(waiting.code, waiting.stderr).toBe(7);
  // A run that waits for its decision in its own process: an approval from the page goes on in it.
  const live = startCli(['demo', '--run', 'live-1', '--require-approval', 'write_report', '--wait'], { cwd: dir, env: ENV });
  children.push(live);
  for (const deadline = Date.now() + 30_000; !live.output().includes('waits for a decision'); ) {
    if (Date.now() > deadline) throw new Error(`live-1 did not come to wait: ${live.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = await startConsole();
  origin = url.replace(/\/#token=.*$/, '');
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const child of children) child.child.kill('SIGKILL');
  if (consoleProcess) consoleProcess.child.kill('SIGKILL');
});

describe('the console in chromium', () => {
  it('lists the runs with their states, filters to "waiting", and keeps the token out of the address', async () => {
    const page = await openPage(`${origin}/#token=${encodeURIComponent(TOKEN)}`);
    await page.locator('tr.run-row').nth(2).waitFor();
    expect(page.url()).toBe(`${origin}/`);
    const states = async () => Object.fromEntries(await page.locator('tr.run-row').evaluateAll((rows) => rows.map((row) => [row.getAttribute('data-run'), row.getAttribute('data-category')])));
    expect(await states()).toEqual({ 'done-1': 'done', 'wait-1': 'waiting', 'live-1': 'waiting' });
    await page.locator('button[data-category="waiting"]').click();
    await expect.poll(async () => Object.keys(await states()).sort()).toEqual(['live-1', 'wait-1']);
    await page.screenshot({ path: path.join(ARTIFACTS, 'console-list-waiting-1280x900.png'), fullPage: true });
    await page.locator('#search').fill('live');
    await expect.poll(async () => Object.keys(await states())).toEqual(['live-1']);
    await page.close();
  });

  it('refuses a change without the token or from another origin (403), and nothing changes', async () => {
    const page = await openPage(`${origin}/#token=${encodeURIComponent(TOKEN)}`);
    const key = await keyOf(page, 'wait-1');
    await page.close();
    const decision = JSON.stringify({ toolUseId: 'toolu_03', verdict: 'approved' });
    const url = `${origin}/api/runs/${encodeURIComponent(key)}/decisions`;
    const json = { 'content-type': 'application/json' };
    const refused = [
      await fetch(url, { method: 'POST', headers: { ...json, origin }, body: decision }),
      await fetch(url, { method: 'POST', headers: { ...json, origin: 'http://evil.example', authorization: `Bearer ${TOKEN}` }, body: decision }),
      await fetch(url, { method: 'POST', headers: { ...json, authorization: `Bearer ${TOKEN}` }, body: decision }),
      await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain', origin, authorization: `Bearer ${TOKEN}` }, body: decision }),
      await fetch(`${origin}/api/runs/${encodeURIComponent(key)}/cancel`, { method: 'POST', headers: { ...json, origin, authorization: 'Bearer wrong' }, body: '{}' }),
    ];
    expect(refused.map((response) => response.status)).toEqual([403, 403, 403, 403, 403]);
    for (const response of refused) bodies.push({ url, body: await response.text() });
    // A page of another site that a DNS trick sends here names its own host: refused, even a read.
    expect(await statusOf(`${origin}/api/runs`, { authorization: `Bearer ${TOKEN}`, host: `evil.example:${port}` })).toBe(403);
    expect(filesIn(path.join(dir, '.durable-agent', 'runs', 'wait-1', 'decisions'))).toEqual([]);
    expect(filesIn(path.join(dir, '.durable-agent', 'runs', 'wait-1', 'control'))).toEqual([]);
    const pending = await runCliAsync(['pending', '--run', 'wait-1'], { cwd: dir });
    expect(pending.stdout).toContain('the run waits on it');
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'runs', 'wait-1', 'control', 'cancel.json'))).toBe(false);
  });

  it('approves from the page: the waiting run takes it up and finishes, shown live without a reload', async () => {
    const page = await openPage(`${origin}/#token=${encodeURIComponent(TOKEN)}`);
    const key = await keyOf(page, 'live-1');
    await page.locator('tr.run-row[data-run="live-1"] a').click();
    await page.locator('#live-status', { hasText: 'live' }).waitFor();
    expect(await page.locator('#run-state').getAttribute('data-state')).toBe('awaitingDecision');
    expect(await page.locator('#diagram [data-state="awaitingDecision"].current').count()).toBe(1);
    const before = Number(await page.locator('#timeline tr[data-seq]').last().getAttribute('data-seq'));
    await page.evaluate(() => ((window as unknown as { loaded: boolean }).loaded = true));
    await page.locator('.decision[data-call="toolu_03"] button[data-action="approve"]').click();
    await page.locator('#run-state[data-state="done"]').waitFor({ timeout: 20_000 });
    // The same document all along: no reload.
    expect(await page.evaluate(() => (window as unknown as { loaded?: boolean }).loaded)).toBe(true);
    expect(page.url()).toBe(`${origin}/runs/${encodeURIComponent(key)}`);
    const seqs = (await page.locator('#live-log li').evaluateAll((items) => items.map((item) => Number(item.getAttribute('data-seq')))));
    expect(seqs[0]).toBe(before + 1);
    expect(seqs).toEqual(seqs.map((_, i) => before + 1 + i));
    await expect.poll(() => page.locator('#transcript li[data-kind="tool-result"]').last().textContent()).toContain('write_report toolu_03');
    await expect.poll(() => page.locator('#facts').textContent()).toContain('toolu_03 write_report approved by ana');
    const status = await runCliAsync(['status', '--run', 'live-1'], { cwd: dir });
    expect(status.stdout).toMatch(/decided\s+toolu_03 write_report approved by ana/);
    expect((await children[0]!.done).code).toBe(0);
    await page.screenshot({ path: path.join(ARTIFACTS, 'console-run-done-1280x900.png'), fullPage: true });
    await page.close();
  });

  it('denies with a reason from the page; the resumed run finishes with the denial, live', async () => {
    const page = await openPage(`${origin}/#token=${encodeURIComponent(TOKEN)}`);
    await page.locator('tr.run-row[data-run="wait-1"] a').click();
    await page.locator('#live-status', { hasText: 'live' }).waitFor();
    await page.locator('.decision[data-call="toolu_03"] button[data-action="deny"]').click();
    await expect.poll(() => page.locator('#action-result').textContent()).toContain('A denial needs a reason');
    await page.locator('.decision[data-call="toolu_03"] input[data-reason]').fill('not this quarter');
    await page.locator('.decision[data-call="toolu_03"] button[data-action="deny"]').click();
    await page.locator('#nothing-waits', { hasText: 'Decided, not yet taken up' }).waitFor();
    const resumed = await demo('wait-1', '--resume');
    expect(resumed.code, resumed.stderr).toBe(0);
    await page.locator('#run-state[data-state="done"]').waitFor({ timeout: 20_000 });
    await expect.poll(() => page.locator('#facts').textContent()).toContain('toolu_03 write_report denied by ana (not this quarter)');
    await page.close();
  });

  it('forks a finished run at a step from its timeline; the fork is a run of the folder that a resume finishes', async () => {
    const page = await openPage(`${origin}/#token=${encodeURIComponent(TOKEN)}`);
    await page.locator('tr.run-row[data-run="done-1"] a').click();
    await page.locator('#timeline tr[data-seq="4"] button[data-action="fork"]').click();
    await page.locator('#fork-link').click();
    await page.locator('#run-state[data-state="closed"]').waitFor();
    expect(await page.locator('#summary code').textContent()).not.toBe('done-1');
    expect(page.url()).toContain(encodeURIComponent('done-1-at-4'));
    await expect.poll(() => page.locator('#facts').textContent()).toContain('forked fromrun done-1 at its record 4');
    const resumed = await demo('done-1-at-4', '--resume');
    expect(resumed.code, resumed.stderr).toBe(0);
    await page.locator('#run-state[data-state="done"]').waitFor({ timeout: 20_000 });
    await page.close();
  });

  it('lists a folder of 1,000 runs a hundred at a time, filters and searches it', async () => {
    const big = tempDir('da-console-1000-');
    const runs = path.join(big, '.durable-agent', 'runs');
    fs.mkdirSync(runs, { recursive: true });
    for (let n = 0; n < 1000; n++) fs.cpSync(path.join(dir, '.durable-agent', 'runs', 'done-1'), path.join(runs, `run-${String(n).padStart(4, '0')}`), { recursive: true });
    const server = await startConsoleServer({ roots: [path.join(big, '.durable-agent')], port: 0, token: TOKEN, user: 'nobody' });
    try {
      const page = await openPage(server.url);
      const started = Date.now();
      await page.locator('tr.run-row').nth(99).waitFor({ timeout: 30_000 });
      const shownMs = Date.now() - started;
      await page.locator('#total', { hasText: '100 of 1000 runs (the newest 100 of 1000)' }).waitFor();
      expect(await page.locator('tr.run-row').count()).toBe(100);
      expect(shownMs).toBeLessThan(15_000);
      // Each "more" adds the next hundred, and the page's refresh reads them all again.
      for (let shown = 200; shown <= 1000; shown += 100) {
        await page.locator('#more').click();
        await page.locator('#total', { hasText: `${shown} of 1000 runs` }).waitFor();
      }
      await page.locator('#total', { hasText: /^1000 of 1000 runs$/ }).waitFor();
      expect(await page.locator('#more').isHidden()).toBe(true);
      // The copies share their run id: their pages' addresses tell them apart.
      const pages = await page.locator('tr.run-row a').evaluateAll((links) => links.map((link) => link.getAttribute('href')));
      expect(new Set(pages).size).toBe(1000);
      await page.waitForTimeout(2_500);
      expect(await page.locator('tr.run-row').count()).toBe(1000);
      await page.locator('button[data-category="waiting"]').click();
      await page.locator('#total', { hasText: '0 of 1000 runs' }).waitFor();
      // A filter starts again at the first hundred of the runs it keeps.
      await page.locator('button[data-category="done"]').click();
      await page.locator('#total', { hasText: '100 of 1000 runs (the newest 100 of 1000 that match)' }).waitFor();
      // The copies share their run id and task: a search finds all or none of them.
      await page.locator('#search').fill('no such task');
      await page.locator('#total', { hasText: '0 of 1000 runs' }).waitFor();
      await page.close();
    } finally {
      await server.close();
    }
  });

  it('a live page goes on after the console restarts, missing no record', async () => {
    const paced = startCli(['demo', '--run', 'paced-1', '--pace', '1s'], { cwd: dir, env: ENV });
    children.push(paced);
    const page = await openPage(`${origin}/#token=${encodeURIComponent(TOKEN)}`);
    await page.locator('tr.run-row[data-run="paced-1"] a').click();
    await page.locator('#live-status', { hasText: 'live' }).waitFor();
    await page.locator('#live-log li').first().waitFor();
    await stopConsole();
    const stoppedAt = Date.now();
    await page.locator('#live-status', { hasText: 'reconnecting' }).waitFor();
    // Records are written while no console runs.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const restartedAt = Date.now();
    await startConsole();
    expect((await paced.done).code).toBe(0);
    await page.locator('#run-state[data-state="done"]').waitFor({ timeout: 20_000 });
    const first = Number(await page.locator('#live-log li').first().getAttribute('data-seq'));
    const seqs = await page.locator('#live-log li').evaluateAll((items) => items.map((item) => Number(item.getAttribute('data-seq'))));
    const last = Number(await page.locator('#timeline tr[data-seq]').last().getAttribute('data-seq'));
    expect(seqs).toEqual(Array.from({ length: last - first + 1 }, (_, i) => first + i));
    const history = JSON.parse((await runCliAsync(['history', '--run', 'paced-1', '--json'], { cwd: dir })).stdout) as Array<{ at: number }>;
    expect(history.filter((step) => step.at > stoppedAt && step.at < restartedAt).length, 'records written while the console was down').toBeGreaterThan(0);
    await page.close();
  });

  it('no response body holds the API key the runs and the console were started with, nor a page the token', () => {
    expect(bodies.length).toBeGreaterThan(20);
    expect(bodies.filter(({ body }) => body.includes(KEY) || body.includes('console-test-key'))).toEqual([]);
    expect(bodies.filter(({ body }) => body.includes(TOKEN.split(':')[1]!))).toEqual([]);
  });
});
