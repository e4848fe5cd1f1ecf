/**
 * Where a run rests without being finished, on the visualizer's page: the states a resume leaves
 * (stoppedAtMaxTurns, stoppedAtBudget) drawn as resting states, not as ends; a process that
 * stopped at a limit or to wait for a person (exit 5, 8 or 7) never marked as killed, crashed or
 * interrupted. Real demo runs on a real file store, the page opened in Debian's chromium through
 * playwright-core.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import { demoScript, DEMO_TASK, ensureSampleNotes } from '../../src/demo/demo-task.ts';
import { demoTools } from '../../src/demo/demo-tools.ts';
import { scriptedModel } from '../../src/model/scripted-model.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { layoutDiagram } from '../../visualizer/diagram-layout.ts';
import { diagramSvg } from '../../visualizer/diagram-svg.ts';
import { machineGraphOf } from '../../visualizer/machine-graph.ts';
import { runViewOf } from '../../visualizer/run-timeline.ts';
import { vizPage } from '../../visualizer/viz-page.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { REPO } from '../helpers/cli.ts';
import { chromiumPresent } from '../helpers/system-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ARTIFACTS = path.join(REPO, 'test', 'artifacts');
const graph = machineGraphOf(agentLoopMachine);
const RESTING = ['stoppedAtMaxTurns', 'stoppedAtBudget'];
const ENDS = ['done', 'failed', 'cancelled'];

function demo() {
  const dir = tempDir('da-viz-rest-');
  ensureSampleNotes(dir);
  const parts = () => ({ store: new FileStore(path.join(dir, '.durable-agent')), model: scriptedModel(demoScript()), tools: demoTools(dir) });
  return { dir, parts, store: () => new FileStore(path.join(dir, '.durable-agent')) };
}

/** Stopped at MAX_TURNS (exit 5), then resumed with more turns to the end. */
async function stoppedAtMaxTurnsThenDone() {
  const run = demo();
  expect((await startRun({ ...run.parts(), task: DEMO_TASK, maxTurns: 1 })).status).toBe('stoppedAtMaxTurns');
  expect((await resumeRun({ ...run.parts(), maxTurns: 5 })).status).toBe('done');
  return run;
}

/** Stopped at its token budget (exit 8), left there. */
async function stoppedAtBudget() {
  const run = demo();
  expect((await startRun({ ...run.parts(), task: DEMO_TASK, budget: { maxTotalTokens: 1 } })).status).toBe('stoppedAtBudget');
  return run;
}

/** Stopped to wait for a person (exit 7); with `approveAfter`, approved and resumed to the end. */
async function waited(approveAfter: boolean) {
  const run = demo();
  const policy = { requireApproval: ['write_report'], wait: false } as const;
  expect((await startRun({ ...run.parts(), task: DEMO_TASK, ...policy })).status).toBe('waiting');
  if (approveAfter) expect((await resumeRun({ ...run.parts(), ...policy, onDecision: () => ({ verdict: 'approved' as const, by: 'ana' }) })).status).toBe('done');
  return run;
}

async function viewOf(run: { store: () => FileStore }) {
  const store = run.store();
  return runViewOf(store.location, await store.load(), graph);
}

describe('the states a resume leaves, as the visualizer reads and draws them (no browser)', () => {
  it('stoppedAtMaxTurns and stoppedAtBudget are final for the machine, drawn as resting states: no end’s ring; done, failed, cancelled keep theirs', async () => {
    const states = new Map(graph.states.map((state) => [state.name, state]));
    for (const name of RESTING) expect(states.get(name), name).toMatchObject({ final: true, resting: true, role: 'stopped' });
    for (const name of ENDS) expect(states.get(name), name).toMatchObject({ final: true, resting: false, role: 'final' });
    const svg = diagramSvg(await layoutDiagram(graph), 'the machine');
    const group = (name: string): [string, string, string] => {
      const found = new RegExp(`<g class="([^"]*)" data-state="${name}">(.*?)</g>`).exec(svg);
      expect(found, name).not.toBeNull();
      return [found![0], found![1]!, found![2]!];
    };
    for (const name of RESTING) {
      const [, classes, body] = group(name);
      expect(classes.split(' '), name).toContain('resting');
      expect(classes.split(' '), name).not.toContain('final');
      expect(body, name).not.toContain('final-ring');
    }
    for (const name of ENDS) {
      const [, classes, body] = group(name);
      expect(classes.split(' '), name).toContain('final');
      expect(body, name).toContain('final-ring');
    }
  });

  it('a process that stopped at a limit ends at the limit, not finished and not stopped; the run resting there is not finished', async () => {
    const reopened = await viewOf(await stoppedAtMaxTurnsThenDone());
    expect(reopened.processes.map((p) => p.end)).toEqual(['limit', 'finished']);
    const atBudget = await viewOf(await stoppedAtBudget());
    expect(atBudget).toMatchObject({ state: 'stoppedAtBudget', finished: false });
    expect(atBudget.processes.map((p) => p.end)).toEqual(['limit']);
    expect(atBudget.steps.at(-1)!.next).toBe('nothing until a resume gives a larger budget; then ask the model');
  });

  it('a process that stopped to wait for a person ends waiting, whether or not a later one took the run up', async () => {
    expect((await viewOf(await waited(false))).processes.map((p) => p.end)).toEqual(['waiting']);
    expect((await viewOf(await waited(true))).processes.map((p) => p.end)).toEqual(['waiting', 'finished']);
  });
});

let browser: Browser;

beforeAll(async () => {
  if (!chromiumPresent()) return;
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

async function open(run: { dir: string; store: () => FileStore }): Promise<{ page: Page; errors: string[] }> {
  const out = path.join(run.dir, 'viz.html');
  fs.writeFileSync(out, (await vizPage(run.store())).html);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  await page.goto(pathToFileURL(out).href);
  await page.locator('li.step[aria-selected="true"]').waitFor();
  return { page, errors };
}

const CRASH_BANNER = '.marker.crash';

describe.skipIf(!chromiumPresent())('the page of a run that rests without being finished', () => {
  it('draws stoppedAtBudget as the resting state the run is in, and says how it goes on: no crash banner', async () => {
    const { page, errors } = await open(await stoppedAtBudget());
    const stopped = page.locator('svg.machine [data-state="stoppedAtBudget"]');
    await expect(stopped.getAttribute('class')).resolves.toMatch(/\bresting\b/);
    await expect(stopped.getAttribute('class')).resolves.toMatch(/\bcurrent\b/);
    await expect(stopped.locator('.final-ring').count()).resolves.toBe(0);
    await expect(stopped.locator('text.badge').textContent()).resolves.toBe('stopped: more resumes it');
    await expect(page.locator('svg.machine [data-state="done"] .final-ring').count()).resolves.toBe(1);
    // Dashed, not an end's fill: what the reader sees, not only the class.
    await expect(stopped.locator('rect').first().evaluate((rect) => getComputedStyle(rect).strokeDasharray)).resolves.not.toBe('none');
    await expect(page.locator(CRASH_BANNER).count()).resolves.toBe(0);
    await expect(page.locator('.marker.limit').textContent()).resolves.toMatch(/stopped at its budget \(exit 8\), saved and resumable\. A resume with a larger budget goes on/);
    await expect(page.locator('#run-summary').textContent()).resolves.toContain('state stoppedAtBudget (stopped at a limit, resumable)');
    await page.screenshot({ path: path.join(ARTIFACTS, 'viz-stopped-at-budget-1280x800.png') });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('marks a stop at MAX_TURNS that a resume left as a stop at a limit, not as a crash', async () => {
    const { page, errors } = await open(await stoppedAtMaxTurnsThenDone());
    await expect(page.locator(CRASH_BANNER).count()).resolves.toBe(0);
    await expect(page.locator('.marker.limit').textContent()).resolves.toMatch(/stopped after record \d+ at its MAX_TURNS \(exit 5\)/);
    await expect(page.locator('.marker.resume').count()).resolves.toBe(1);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a run that exited 7 to wait for a person shows no crash banner: a wait at the end, and a wait before its resume', async () => {
    const waiting = await open(await waited(false));
    await expect(waiting.page.locator(CRASH_BANNER).count()).resolves.toBe(0);
    await expect(waiting.page.locator('.marker.open').count()).resolves.toBe(0);
    await expect(waiting.page.locator('.marker.waited').textContent()).resolves.toMatch(/waits after record \d+ for a person's decision about toolu_03 write_report/);
    await expect(waiting.page.locator('#run-summary').textContent()).resolves.toContain('state awaitingDecision (waiting for a person)');
    expect(waiting.errors).toEqual([]);
    await waiting.page.close();

    const resumed = await open(await waited(true));
    await expect(resumed.page.locator(CRASH_BANNER).count()).resolves.toBe(0);
    await expect(resumed.page.locator('.marker.waited').textContent()).resolves.toContain("with a call waiting for a person's decision");
    expect(resumed.errors).toEqual([]);
    await resumed.page.close();
  });
});
