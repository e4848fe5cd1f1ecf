/**
 * A wait for an event, seen and ended from the console's page in chromium: a real CLI run
 * (`--tools wait --wait`) waits for its event; the page says what it waits for and offers no
 * approval (a wait is not approved: it ends at its time or with its event); the event sent from
 * the page with its data goes through the run's signal inbox, the waiting process takes it and
 * finishes live, and the model gets the data as the wait's result. An approval asked for a wait
 * over the API is refused and changes nothing.
 */
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningConsole, startConsole } from '../../src/console/console-server.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { FileRuns } from '../../src/store/file-runs.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { runCliAsync, startCli } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { toolResultOf } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-console-wait-0123456789';
const TOKEN = 'eve:console-wait-token-0123456789';
const USAGE = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 };

let browser: Browser;
let model: FakeAnthropic;
let modelUrl: string;
let server: RunningConsole;
const children: Array<ReturnType<typeof startCli>> = [];

beforeAll(async () => {
  const script = [toolUseReply([{ id: 'toolu_w1', name: 'wait', input: { event: 'deploy-done', timeoutSeconds: 600 } }]), endTurnReply('The deploy is done.')];
  model = new FakeAnthropic((request) => ({ reply: { ...script[assistantTurns(request)]!, usage: USAGE } }));
  modelUrl = await model.start();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  for (const child of children) child.child.kill('SIGKILL');
  await server?.close();
  await browser?.close();
  await model?.stop();
});

describe('a wait ended from the page', () => {
  it('says what the run waits for, offers the event and no approval; the event sent there ends the wait live', async () => {
    const dir = tempDir('da-console-wait-');
    const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: modelUrl };
    const waiting = startCli(['run', '--run', 'wait-1', '--model', 'claude-test-model', '--task', 'Wait for the deploy', '--tools', 'wait', '--wait'], { cwd: dir, env });
    children.push(waiting);
    const store = new FileRuns(dir).store('wait-1');
    for (const deadline = Date.now() + 30_000; !(await store.exists()) || !(await store.load()).records.some((stored) => stored.record.event === 'DECISION_NEEDED'); ) {
      if (Date.now() > deadline || waiting.child.exitCode !== null) throw new Error(`wait-1 did not come to wait: ${waiting.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    server = await startConsole({ roots: [path.join(dir, '.durable-agent')], port: 0, token: TOKEN, user: 'nobody', secrets: [KEY] });
    const origin = new URL(server.url).origin;

    // An approval is no way to end a wait: refused, nothing written.
    const list = (await (await fetch(`${origin}/api/runs`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { rows: Array<{ runId: string; key: string; category: string; waitsFor: string | null }> };
    const row = list.rows.find((r) => r.runId === 'wait-1')!;
    expect(row.category).toBe('waiting');
    expect(row.waitsFor).toMatch(/^toolu_w1 wait: event deploy-done \(until \d{4}-\d\d-\d\dT[\d:.]+Z at the latest\)$/);
    const approve = await fetch(`${origin}/api/runs/${encodeURIComponent(row.key)}/decisions`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, origin, 'content-type': 'application/json' }, body: JSON.stringify({ toolUseId: 'toolu_w1', verdict: 'approved' }) });
    expect(approve.status).toBe(409);
    expect(((await approve.json()) as { error: string }).error).toContain('is a wait');
    const unsigned = await fetch(`${origin}/api/runs/${encodeURIComponent(row.key)}/signals`, { method: 'POST', headers: { origin, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'deploy-done' }) });
    expect(unsigned.status).toBe(403);

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(server.url);
    await page.locator('tr.run-row[data-run="wait-1"][data-category="waiting"] a').click();
    await page.locator('#live-status', { hasText: 'live' }).waitFor();
    const box = page.locator('.decision[data-call="toolu_w1"]');
    await expect.poll(() => box.textContent()).toContain('wait waits for event deploy-done (until ');
    expect(await box.getAttribute('data-needs')).toBe('wait');
    expect(await box.locator('button[data-action="approve"]').count()).toBe(0);
    expect(await box.locator('button[data-action="approve-edited"]').count()).toBe(0);
    expect(await box.locator('button[data-action="deny"]').textContent()).toBe('Stop the wait');
    await box.locator('textarea[data-signal]').fill('{"version": 7}');
    await box.locator('button[data-action="signal"]').click();
    await expect.poll(() => page.locator('#action-result').textContent()).toContain('event deploy-done sent by eve');
    await page.locator('#run-state[data-state="done"]').waitFor({ timeout: 20_000 });
    const done = await waiting.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain('[done] The deploy is done.');
    const result = toolResultOf(model.requests[1]!.body.messages, 'toolu_w1');
    expect(JSON.stringify(result?.content)).toContain('\\"version\\":7');
    const status = await runCliAsync(['status', '--run', 'wait-1'], { cwd: dir });
    expect(status.code, status.stderr).toBe(0);
    await page.close();
  }, 90_000);
});
