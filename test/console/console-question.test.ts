/**
 * A question of the model answered from the console's page in chromium: a real CLI run started
 * with --allow-questions --wait against the fake Messages API asks with ask_user; the page shows
 * the question, the answer typed there goes through the run's inbox, the waiting process takes
 * it up and finishes, the page shows it live, and the model gets the answer as the call's result.
 */
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningConsole, startConsole } from '../../src/console/console-server.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { runCliAsync, startCli } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { toolResultOf } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-console-question-0123456789';
const TOKEN = 'eve:console-question-token-0123456789';
const QUESTION = 'Which year should the summary cover?';
const USAGE = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 };

let browser: Browser;
let model: FakeAnthropic;
let modelUrl: string;
let server: RunningConsole;
const children: Array<ReturnType<typeof startCli>> = [];

beforeAll(async () => {
  const script = [toolUseReply([{ id: 'toolu_q1', name: 'ask_user', input: { question: QUESTION } }]), endTurnReply('Thanks, summarising 2024.')];
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

describe('a question answered from the page', () => {
  it('shows the model\'s question; the answer typed there is taken up by the waiting run, which finishes live', async () => {
    const dir = tempDir('da-console-question-');
    const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: modelUrl };
    const asking = startCli(['run', '--run', 'ask-1', '--model', 'claude-test-model', '--task', 'Summarise the sales notes', '--allow-questions', '--wait'], { cwd: dir, env });
    children.push(asking);
    for (const deadline = Date.now() + 30_000; !asking.output().includes('[question] toolu_q1'); ) {
      if (Date.now() > deadline || asking.child.exitCode !== null) throw new Error(`ask-1 did not come to ask: ${asking.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    server = await startConsole({ roots: [path.join(dir, '.durable-agent')], port: 0, token: TOKEN, user: 'nobody', secrets: [KEY] });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(server.url);
    await page.locator('tr.run-row[data-run="ask-1"][data-category="waiting"] a').click();
    await page.locator('#live-status', { hasText: 'live' }).waitFor();
    const box = page.locator('.decision[data-call="toolu_q1"]');
    await expect.poll(() => box.textContent()).toContain('ask_user waits for an answer');
    expect(await box.locator('p.question').textContent()).toBe(QUESTION);
    // No approval for a question: only an answer, or a denial with a reason.
    expect(await box.locator('button[data-action="approve"]').count()).toBe(0);
    await box.locator('input[data-reason]').fill('2024, please');
    await box.locator('button[data-action="answer"]').click();
    await page.locator('#run-state[data-state="done"]').waitFor({ timeout: 20_000 });
    await expect.poll(() => page.locator('#facts').textContent()).toContain('toolu_q1 ask_user answered by eve');
    const done = await asking.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain('[decided] toolu_q1 ask_user answered by eve: 2024, please');
    expect(done.stdout).toContain('[done] Thanks, summarising 2024.');
    expect(toolResultOf(model.requests[1]!.body.messages, 'toolu_q1')).toMatchObject({ content: '2024, please' });
    const status = await runCliAsync(['status', '--run', 'ask-1'], { cwd: dir });
    expect(status.stdout).toMatch(/toolu_q1 ask_user answered by eve/);
    await page.close();
  }, 90_000);
});
