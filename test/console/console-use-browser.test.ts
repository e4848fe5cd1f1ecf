/**
 * The console as a person uses it, in a real browser (Debian's chromium through playwright-core)
 * at 1280 px, over runs in every state made by the real CLI and one by a program with its own
 * agent, of a tenant of its own: the list names each run's agent, tool and tenant, filters by
 * tenant, and fits the page even when what a run waits for is long; a run's page offers only the controls its state takes, shows how a run at rest
 * ended instead of an empty live panel, and draws the machine with labels a person can read,
 * zoomed and panned by buttons, the wheel and a drag; and no load asks for something that is
 * not there (the page's icon is its own).
 */
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningConsole, startConsole } from '../../src/console/console-server.ts';
import { defineAgent } from '../../src/agent/agent-definition.ts';
import { startRun } from '../../src/index.ts';
import { openRunsFolder } from '../../src/store/open-store.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/testing.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { runCliAsync, startCli } from '../helpers/cli.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { assistantTurns, FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-console-use-0123456789';
const TOKEN = 'ana:console-use-token-0123456789';
const USAGE = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 };
/** An event name as a deployment pipeline makes them: long, and one word. */
const LONG_EVENT = 'deployment-of-release-2026-11-3-to-the-eu-west-1-production-cluster-finished-and-verified-by-the-release-train';
const VIEWPORT = { width: 1280, height: 800 };

let browser: Browser;
let model: FakeAnthropic;
let server: RunningConsole;
let dir: string;
let agentVersion: string;
const children: Array<ReturnType<typeof startCli>> = [];
/** What went wrong while the pages loaded: answers of 400 and up, and the console's errors. */
const problems: string[] = [];

async function openPage(): Promise<Page> {
  const page = await browser.newPage({ viewport: VIEWPORT });
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
  });
  // A live stream that a closed page ends is aborted: anything else that fails is a problem.
  page.on('requestfailed', (request) => {
    if (request.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`failed ${request.url()}: ${request.failure()?.errorText}`);
  });
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  await page.goto(server.url);
  return page;
}

async function openRun(runId: string): Promise<Page> {
  const page = await openPage();
  await page.locator(`tr.run-row[data-run="${runId}"] a`).click();
  await page.locator('#run-state').waitFor();
  // The run is read and its controls and panels drawn in one go: the summary comes with them.
  await page.locator('#diagram svg').waitFor();
  return page;
}

async function expectNoOverflow(page: Page): Promise<void> {
  const [scrollWidth, clientWidth] = await page.evaluate(() => [document.scrollingElement!.scrollWidth, document.scrollingElement!.clientWidth]);
  expect(scrollWidth, 'the page scrolls sideways').toBeLessThanOrEqual(clientWidth);
}

/** The actions a run's page offers, by their data-action. */
async function actionsOn(page: Page): Promise<string[]> {
  return (await page.locator('#actions button[data-action]').evaluateAll((buttons) => buttons.map((button) => button.getAttribute('data-action')!))).sort();
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 60_000; !(await check()); ) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within a minute`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  dir = tempDir('da-console-use-');
  model = new FakeAnthropic((request) => {
    const script = [toolUseReply([{ id: 'toolu_w1', name: 'wait', input: { event: LONG_EVENT, timeoutSeconds: 3600 } }]), endTurnReply('Deployed.')];
    return { reply: { ...script[assistantTurns(request)]!, usage: USAGE } };
  });
  const modelUrl = await model.start();
  const demo = (run: string, ...more: string[]) => runCliAsync(['demo', '--run', run, ...more], { cwd: dir });
  // A run that a process drives, paused: it stops at its next step and stays paused.
  const paced = startCli(['demo', '--run', 'paused-1', '--pace', '1s'], { cwd: dir });
  // A run that waits in its process for an event with a long name.
  const deploy = startCli(['run', '--run', 'deploy-1', '--model', 'claude-test-model', '--task', 'Wait for the EU deployment, then report.', '--tools', 'wait', '--wait'], { cwd: dir, env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: modelUrl } });
  children.push(deploy);
  const [done, waiting, stopped, crashed, toCancel] = await Promise.all([
    demo('done-1'),
    demo('wait-1', '--require-approval', 'write_report', '--no-wait'),
    demo('stopped-1', '--max-turns', '1'),
    runCliAsync(['demo', '--run', 'crashed-1'], { cwd: dir, env: { CRASH_AFTER: 'after-save-a:2' } }),
    demo('cancelled-1', '--require-approval', 'write_report', '--no-wait'),
  ]);
  expect([done.code, waiting.code, stopped.code, toCancel.code], `${done.stderr}${waiting.stderr}${stopped.stderr}${toCancel.stderr}`).toEqual([0, 7, 5, 7]);
  expect(crashed.code, crashed.stderr).not.toBe(0);
  const cancel = await runCliAsync(['cancel', '--run', 'cancelled-1', '--reason', 'not this week', '--by', 'ana'], { cwd: dir });
  expect(cancel.code, cancel.stderr).toBe(0);
  await waitFor("the paced run's first turn", () => paced.output().includes('[turn 1]'));
  const pause = await runCliAsync(['pause', '--run', 'paused-1', '--by', 'ops'], { cwd: dir });
  expect(pause.code, pause.stderr).toBe(0);
  expect((await paced.done).code).toBe(130);
  const deployStore = openRunsFolder(path.join(dir, '.durable-agent')).store('deploy-1');
  await waitFor('deploy-1 to wait for its event', async () => {
    if (deploy.child.exitCode !== null) throw new Error(`deploy-1 ended: ${deploy.output()}`);
    return (await deployStore.exists()) && (await deployStore.load()).records.some((stored) => stored.record.event === 'DECISION_NEEDED');
  });
  // A program's run of its own agent, waiting for approval of its email, in the same folder.
  const { tools } = countingTools();
  const agent = defineAgent({ name: 'invoicer', model: scriptedModel([toolUseReply([{ id: 'toolu_send', name: 'send_email', input: { to: 'billing@example.com' } }]), endTurnReply('sent')]), tools, requireApproval: ['send_email'] });
  agentVersion = agent.version;
  const started = await startRun({ agent, store: openRunsFolder(path.join(dir, '.durable-agent')).store('agent-1'), task: 'Send the invoice', tenant: 'acme', wait: false });
  expect(started.status).toBe('waiting');
  server = await startConsole({ roots: [path.join(dir, '.durable-agent')], port: 0, token: TOKEN, user: 'ana', secrets: [KEY] });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  for (const child of children) child.child.kill('SIGKILL');
  await browser?.close();
  await server?.close();
  await model?.stop();
});

describe('the console at 1280 px in chromium', () => {
  it('lists each run with its agent and its tool, and fits the page although what a run waits for is long', async () => {
    const page = await openPage();
    await page.locator('tr.run-row[data-run="agent-1"]').waitFor();
    await page.locator('tr.run-row').nth(7).waitFor();
    const cells = async (runId: string) => {
      const row = page.locator(`tr.run-row[data-run="${runId}"]`);
      return { agent: await row.locator('td.agent').textContent(), tool: await row.locator('td.tool').textContent(), waits: await row.locator('td.waits').textContent() };
    };
    expect(await cells('agent-1')).toEqual({ agent: `invoicer@${agentVersion}`, tool: 'send_email', waits: 'toolu_send send_email: approval' });
    expect(await page.locator('tr.run-row[data-run="agent-1"] td.agent').getAttribute('title')).toBe(`invoicer@${agentVersion}`);
    expect(await cells('wait-1')).toEqual({ agent: 'demo', tool: 'write_report', waits: 'toolu_03 write_report: approval' });
    expect(await cells('done-1')).toMatchObject({ agent: 'demo', tool: 'write_report', waits: '-' });
    expect(await cells('stopped-1')).toMatchObject({ agent: 'demo', tool: 'read_notes' });
    // A run of `run` has no agent of its own: its model and tools were given by the command.
    const deploy = await cells('deploy-1');
    expect(deploy).toMatchObject({ agent: '-', tool: 'wait' });
    expect(deploy.waits).toContain(LONG_EVENT);
    // Folder runs only: the fleet's worker and lease columns are not there; one run of a tenant brings the tenant column.
    expect(await page.locator('#runs th').allTextContents()).toEqual(['run', 'tenant', 'state', 'agent', 'tool', 'task', 'turn', 'tokens', 'cost', 'last save', 'waits for']);
    expect(await page.locator('tr.run-row[data-run="agent-1"] td.tenant').textContent()).toBe('acme');
    expect(await page.locator('tr.run-row[data-run="wait-1"] td.tenant').textContent()).toBe('default');

    await expectNoOverflow(page);
    const [tableWidth, boxWidth] = await page.locator('#runs').evaluate((table) => [table.scrollWidth, table.parentElement!.clientWidth]);
    expect(tableWidth, 'the list scrolls inside its box').toBeLessThanOrEqual(boxWidth);

    // The tenant filter narrows the list to one tenant's runs, and says so in the address.
    expect(await page.locator('#tenant-filter option').allTextContents()).toEqual(['every tenant', 'acme', 'default']);
    await page.locator('#tenant-filter').selectOption('acme');
    await page.waitForFunction(() => document.querySelectorAll('tr.run-row').length === 1);
    expect(await page.locator('tr.run-row').getAttribute('data-run')).toBe('agent-1');
    expect(new URL(page.url()).search).toBe('?tenant=acme');
    await page.locator('#tenant-filter').selectOption('');
    await page.locator('tr.run-row').nth(7).waitFor();
    await page.close();
  });

  it("a run's page fits too, with the long wait in its form", async () => {
    const page = await openRun('deploy-1');
    await page.locator('.decision[data-call="toolu_w1"]').waitFor();
    expect(await page.locator('.decision[data-call="toolu_w1"]').textContent()).toContain(LONG_EVENT);
    await expectNoOverflow(page);
    await page.close();
  });

  it('offers only the controls that apply: to a waiting, a paused, a stopped, a crashed, a cancelled and a done run', async () => {
    const offered: Record<string, string[]> = {};
    for (const runId of ['wait-1', 'agent-1', 'deploy-1', 'paused-1', 'stopped-1', 'crashed-1', 'cancelled-1', 'done-1']) {
      const page = await openRun(runId);
      offered[runId] = await actionsOn(page);
      offered[`${runId} shown`] = [String(await page.locator('#actions').isVisible())];
      await page.close();
    }
    expect(offered).toEqual({
      // A call waits for approval: approve or deny it; the run is not paused: pause, not unpause.
      'wait-1': ['approve', 'approve-edited', 'cancel', 'deny', 'pause'],
      'wait-1 shown': ['true'],
      'agent-1': ['approve', 'approve-edited', 'cancel', 'deny', 'pause'],
      'agent-1 shown': ['true'],
      // A wait is not approved: its event is sent, or it is stopped.
      'deploy-1': ['cancel', 'deny', 'pause', 'signal'],
      'deploy-1 shown': ['true'],
      'paused-1': ['cancel', 'unpause'],
      'paused-1 shown': ['true'],
      // Stopped at its limit, no process drives it: nothing to pause; a resume with more goes on.
      'stopped-1': ['cancel'],
      'stopped-1 shown': ['true'],
      'crashed-1': ['cancel', 'pause'],
      'crashed-1 shown': ['true'],
      // An ended run: nothing to decide or control, and no empty box for it.
      'cancelled-1': [],
      'cancelled-1 shown': ['false'],
      'done-1': [],
      'done-1 shown': ['false'],
    });
  });

  it('shows how a run at rest ended where a live run shows its records, never an empty panel', async () => {
    const outcome = async (runId: string) => {
      const page = await openRun(runId);
      await page.locator('#live h2').first().waitFor();
      const shown = {
        heading: (await page.locator('#live h2').first().textContent())!.replace(/\s+/g, ' ').trim(),
        outcome: (await page.locator('#outcome').count()) ? (await page.locator('#outcome > *').allTextContents()).join(' ') : null,
        liveLog: await page.locator('#live-log').count(),
        empty: await page.locator('#live').evaluate((box) => (box.textContent ?? '').trim() === ''),
      };
      await page.close();
      return shown;
    };
    const done = await outcome('done-1');
    expect(done).toMatchObject({ heading: 'Outcome done', liveLog: 0, empty: false });
    expect(done.outcome).toContain('the answer Report written to report.txt, task complete.');
    expect((await outcome('cancelled-1')).outcome).toContain('cancelled by ana: not this week');
    expect((await outcome('stopped-1')).outcome).toContain('stopped at its limit of 1 turn:');
    // A run that may yet write: its live records, and a word while none came.
    const waiting = await outcome('wait-1');
    expect(waiting).toMatchObject({ outcome: null, liveLog: 1, empty: false });
    expect(waiting.heading).toMatch(/^Live records \((connecting|live)\)$/);
  });

  it('draws the machine with labels of 10 px and more, zoomed and panned by buttons, the wheel and a drag', async () => {
    const page = await openRun('wait-1');
    const diagram = page.locator('#diagram');
    await page.locator('#diagram [data-state="awaitingDecision"].current').waitFor();
    /** The rendered height of each line of the arrows' labels and of the states' names, in CSS pixels. */
    const heights = () =>
      page.evaluate(() => {
        const height = (selector: string) => Array.from(document.querySelectorAll(selector), (node) => node.getBoundingClientRect().height);
        return { labels: height('#diagram .edge-label tspan'), names: height('#diagram .state .name') };
      });
    const shown = await heights();
    expect(shown.labels.length).toBeGreaterThan(20);
    expect(Math.min(...shown.labels), 'the smallest label line').toBeGreaterThanOrEqual(10);
    expect(Math.min(...shown.names), 'the smallest state name').toBeGreaterThanOrEqual(12);
    // The state the run rests in is in the window.
    const inView = async (state: string) =>
      page.evaluate((name) => {
        const view = document.getElementById('diagram')!.getBoundingClientRect();
        const box = document.querySelector(`#diagram [data-state="${name}"] > rect`)!.getBoundingClientRect();
        return box.left >= view.left && box.right <= view.right && box.top >= view.top && box.bottom <= view.bottom;
      }, state);
    expect(await inView('awaitingDecision')).toBe(true);
    await expectNoOverflow(page);

    const viewBox = () => diagram.locator('svg').getAttribute('viewBox');
    const zoom = async () => Number((await page.locator('#diagram-zoom').textContent())!.replace('%', ''));
    expect(await zoom()).toBe(100);
    await page.locator('button[data-diagram="zoom-out"]').click();
    expect(await zoom()).toBe(80);
    expect(Math.max(...(await heights()).labels)).toBeLessThan(Math.min(...shown.labels));
    await page.locator('button[data-diagram="zoom-in"]').click();
    await page.locator('button[data-diagram="zoom-in"]').click();
    expect(await zoom()).toBe(125);
    // The whole machine fits the window.
    await page.locator('button[data-diagram="whole"]').click();
    expect(await zoom()).toBeLessThan(100);
    expect(await inView('awaitingModel')).toBe(true);
    expect(await inView('done')).toBe(true);
    // Ctrl and the wheel zoom in where the pointer is.
    const box = (await diagram.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const before = await zoom();
    await page.keyboard.down('Control');
    await page.mouse.wheel(0, -200);
    await page.keyboard.up('Control');
    await expect.poll(zoom).toBeGreaterThan(before);
    // The wheel alone moves the window over the drawing, not the page.
    const scrolled = async () => page.evaluate(() => document.scrollingElement!.scrollTop);
    const [atWheel, pageAtWheel] = [await viewBox(), await scrolled()];
    await page.mouse.wheel(0, 120);
    await expect.poll(viewBox).not.toBe(atWheel);
    expect(await scrolled()).toBe(pageAtWheel);
    // A drag moves the window over the drawing.
    const moved = await viewBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 - 150, box.y + box.height / 2 - 80, { steps: 5 });
    await page.mouse.up();
    expect(await viewBox()).not.toBe(moved);
    // Back to the run's state at full size.
    await page.locator('button[data-diagram="current"]').click();
    expect(await zoom()).toBe(100);
    expect(await inView('awaitingDecision')).toBe(true);
    // The arrows' labels hide to show the shape, and come back.
    await page.locator('#diagram-labels').uncheck();
    expect(await page.locator('#diagram .edge-label').first().isVisible()).toBe(false);
    await page.locator('#diagram-labels').check();
    expect(await page.locator('#diagram .edge-label').first().isVisible()).toBe(true);
    await page.close();
  });

  it('loads with its own icon and asks for nothing that is not there', async () => {
    const page = await openRun('done-1');
    // Every page of this file loaded without an answer of 404 or an error in the browser's console.
    expect(problems).toEqual([]);
    expect(await page.locator('link[rel="icon"]').getAttribute('href')).toMatch(/^data:image\/svg\+xml,/);
    await page.close();
    // A browser that asks for /favicon.ico all the same (the JSON of the API opened in a tab) gets the icon.
    const icon = await fetch(new URL('/favicon.ico', server.url));
    expect([icon.status, icon.headers.get('content-type')]).toEqual([200, 'image/svg+xml']);
    expect(await icon.text()).toMatch(/^<svg /);
  });
});
