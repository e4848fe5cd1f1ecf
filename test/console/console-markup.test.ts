/**
 * Text of a run that looks like markup stays text on the console's page, in chromium: a real
 * CLI run whose task, the model's question and its final answer are HTML is shown in the list
 * and on its page with every character as written, and none of it becomes an element.
 */
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningConsole, startConsole } from '../../src/console/console-server.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { startCli } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-console-markup-0123456789';
const TOKEN = 'eve:console-markup-token-0123456789';
const MARKUP = (where: string) => `<b class="xss">${where}</b><img class="xss" src="x" onerror="window.__xss='${where}'"><script class="xss">window.__xss='${where}'</script>`;
const USAGE = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 };

let browser: Browser;
let model: FakeAnthropic;
let modelUrl: string;
let server: RunningConsole;
const children: Array<ReturnType<typeof startCli>> = [];

beforeAll(async () => {
  const script = [toolUseReply([{ id: 'toolu_m1', name: 'ask_user', input: { question: MARKUP('question') } }]), endTurnReply(MARKUP('answer'))];
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

/** Nothing of the run's text became an element, and no script of it ran. */
async function expectNoMarkup(page: Page): Promise<void> {
  expect(await page.locator('.xss').count()).toBe(0);
  expect(await page.evaluate(() => (window as unknown as { __xss?: string }).__xss)).toBeUndefined();
}

describe("a run's text that looks like markup", () => {
  it('is shown as written in the list, the summary, the question and the conversation, and never becomes an element', async () => {
    const dir = tempDir('da-console-markup-');
    const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: modelUrl };
    const asking = startCli(['run', '--run', 'markup-1', '--model', 'claude-test-model', '--task', MARKUP('task'), '--allow-questions', '--wait'], { cwd: dir, env });
    children.push(asking);
    for (const deadline = Date.now() + 30_000; !asking.output().includes('[question] toolu_m1'); ) {
      if (Date.now() > deadline || asking.child.exitCode !== null) throw new Error(`markup-1 did not come to ask: ${asking.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    server = await startConsole({ roots: [path.join(dir, '.durable-agent')], port: 0, token: TOKEN, user: 'nobody', secrets: [KEY] });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(server.url);
    const row = page.locator('tr.run-row[data-run="markup-1"]');
    await row.waitFor();
    expect(await row.locator('td.task').textContent()).toBe(MARKUP('task'));
    expect(await row.locator('td.task').getAttribute('title')).toBe(MARKUP('task'));
    await expectNoMarkup(page);

    await row.locator('a').click();
    await page.locator('#live-status', { hasText: 'live' }).waitFor();
    const box = page.locator('.decision[data-call="toolu_m1"]');
    await box.waitFor();
    expect(await box.locator('p.question').textContent()).toBe(MARKUP('question'));
    expect(await page.locator('#facts').textContent()).toContain(MARKUP('task'));
    expect(await page.locator('#transcript li[data-kind="text"] .body').first().textContent()).toBe(MARKUP('task'));
    await expectNoMarkup(page);

    await box.locator('input[data-reason]').fill(MARKUP('reply'));
    await box.locator('button[data-action="answer"]').click();
    await page.locator('#run-state[data-state="done"]').waitFor({ timeout: 20_000 });
    await expect.poll(() => page.locator('#facts').textContent()).toContain(MARKUP('answer'));
    await expect.poll(() => page.locator('#transcript').textContent()).toContain(MARKUP('reply'));
    await expectNoMarkup(page);
    const done = await asking.done;
    expect(done.code, done.stderr).toBe(0);
    await page.close();
  }, 90_000);
});
