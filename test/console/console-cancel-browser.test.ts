/**
 * A cancel from the console's page in a real browser (Debian's chromium through playwright-core):
 * a paced demo run driven by its own CLI process in a folder of runs, the console started as the
 * real CLI with its token; the page's Cancel control with a reason stops the run at its next step
 * (its process exits 9), the page shows it cancelled live without a reload, and the journal
 * records the cancel with the reason and the console's name as `by`.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { runCliAsync, startCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freePort } from '../helpers/free-port.ts';

// A key of the real shape, made up (joined here so that no key-shaped text is committed).
const KEY = ['sk', 'ant', 'api03', 'console-cancel-test-key-0123456789'].join('-');
const TOKEN = 'ana:console-cancel-secret-0123456789';
const ENV = { ANTHROPIC_API_KEY: KEY };

let browser: Browser;
let dir: string;
let origin: string;
const children: Array<ReturnType<typeof startCli>> = [];

beforeAll(async () => {
  dir = tempDir('da-console-cancel-');
  const port = await freePort();
  const started = startCli(['console', '--dir', dir, '--port', String(port)], { cwd: dir, env: { ...ENV, DURABLE_AGENT_CONSOLE_TOKEN: TOKEN } });
  children.push(started);
  let stderr = '';
  started.child.stderr.on('data', (chunk: Buffer | string) => (stderr += String(chunk)));
  await vi.waitFor(() => expect(/\[console\] (http:\S+)/.test(started.output()) || started.child.exitCode !== null, `the console did not start: ${started.output()}${stderr}`).toBe(true), { timeout: 60_000, interval: 50 });
  const url = /\[console\] (http:\S+)/.exec(started.output())?.[1];
  if (!url) throw new Error(`the console did not start: ${started.output()}${stderr}`);
  origin = url.replace(/\/#token=.*$/, '');
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const child of children) child.child.kill('SIGKILL');
});

describe('cancel from the console in chromium', () => {
  it('the page cancels a run another process drives: it exits 9, the page shows it cancelled live, the journal names the reason and the console', async () => {
    // Each step waits 3 s: long enough to open the page and click on a loaded machine, and the
    // run sees the request at its next step.
    const paced = startCli(['demo', '--run', 'paced-1', '--pace', '3000', '--plain'], { cwd: dir, env: ENV });
    children.push(paced);
    await vi.waitFor(() => expect(paced.output().includes('[save A]') || paced.child.exitCode !== null, `the demo never saved: ${paced.output()}`).toBe(true), { timeout: 60_000, interval: 50 });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${origin}/#token=${encodeURIComponent(TOKEN)}`);
    await page.locator('tr.run-row[data-run="paced-1"] a').click();
    await page.locator('#live-status', { hasText: 'live' }).waitFor({ timeout: 30_000 });
    await page.locator('button[data-action="cancel"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('#run-state').getAttribute('data-state')).not.toBe('cancelled');
    await page.evaluate(() => ((window as unknown as { loaded: boolean }).loaded = true));
    const before = page.url();
    await page.locator('#cancel-reason').fill('wrong task');
    // The run writes records while a person types: the forms are drawn again, and what was typed stays.
    await page.evaluate(() => ((document.querySelector('#cancel-reason') as unknown as { drawnBefore: boolean }).drawnBefore = true));
    await expect.poll(() => page.evaluate(() => (document.querySelector('#cancel-reason') as unknown as { drawnBefore?: boolean } | null)?.drawnBefore), { timeout: 30_000 }).toBeUndefined();
    expect(await page.locator('#cancel-reason').inputValue()).toBe('wrong task');
    await page.locator('button[data-action="cancel"]').click();
    await expect.poll(() => page.locator('#action-result').textContent(), { timeout: 30_000 }).toContain('(by ana)');
    const ended = await paced.done;
    expect(ended.code, ended.stdout + ended.stderr).toBe(EXIT.cancelled);
    expect(ended.stdout).toContain('[cancelled] the run was cancelled by ana');
    expect(ended.stdout).toContain('(reason: wrong task)');
    await page.locator('#run-state[data-state="cancelled"]').waitFor({ timeout: 30_000 });
    await expect.poll(() => page.locator('#facts').textContent(), { timeout: 30_000 }).toContain('by ana: wrong task');
    // The same document all along: no reload.
    expect(await page.evaluate(() => (window as unknown as { loaded?: boolean }).loaded)).toBe(true);
    expect(page.url()).toBe(before);
    await expect.poll(() => page.locator('#live-log li').last().textContent(), { timeout: 30_000 }).toContain('cancelled CANCEL');
    // A finished run has no controls left.
    expect(await page.locator('button[data-action="cancel"]').count()).toBe(0);
    const status = await runCliAsync(['status', '--run', 'paced-1', '--json'], { cwd: dir });
    expect(status.code, status.stderr).toBe(0);
    const json = JSON.parse(status.stdout) as { state: string; cancellation: { by: string; reason: string | null } | null };
    expect(json.state).toBe('cancelled');
    expect(json.cancellation).toMatchObject({ by: 'ana', reason: 'wrong task' });
    const history = await runCliAsync(['history', '--run', 'paced-1'], { cwd: dir });
    expect(history.stdout).toMatch(/CANCEL +save-cancelled.*cancelled by ana/);
    await page.close();
  }, 180_000);
});
