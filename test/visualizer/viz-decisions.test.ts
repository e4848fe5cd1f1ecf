/**
 * A person in the loop on the visualizer's page, in a real browser (Debian's chromium through
 * playwright-core), for demo runs driven by the real CLI: one stopped while write_report waits
 * for approval, one approved later with edited input and resumed, one denied by a deadline.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import type { HistoryStep } from '../../src/runtime/run-status.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { machineGraphOf } from '../../visualizer/machine-graph.ts';
import { runViewOf } from '../../visualizer/run-timeline.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { REPO, runCliAsync } from '../helpers/cli.ts';
import { chromiumPresent } from '../helpers/system-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ARTIFACTS = path.join(REPO, 'test', 'artifacts');
const WAITING = 7;
const graph = machineGraphOf(agentLoopMachine);

async function cli(args: string[], dir: string, code = 0) {
  const run = await runCliAsync(args, { cwd: dir });
  expect(run.code, `${args.join(' ')}\n${run.stdout}\n${run.stderr}`).toBe(code);
  return run;
}

async function historyOf(dir: string): Promise<HistoryStep[]> {
  return JSON.parse((await cli(['history', '--json'], dir)).stdout) as HistoryStep[];
}

async function writePage(dir: string, name: string): Promise<string> {
  const out = path.join(dir, name);
  await cli(['viz', '--out', out], dir);
  return pathToFileURL(out).href;
}

describe('the run view of a run with decisions (no browser)', () => {
  it('has the waiting call, the decision with who, how, the edited input, since when and how long, on the records that made them durable', async () => {
    const dir = tempDir('da-viz-dec-');
    await cli(['demo', '--require-approval', 'write_report', '--no-wait'], dir, WAITING);
    await cli(['approve', 'toolu_03', '--input', '{"content":"Short report."}', '--note', 'shorter', '--by', 'ana'], dir);
    await cli(['demo', '--resume', '--require-approval', 'write_report', '--no-wait'], dir);
    const store = new FileStore(path.join(dir, '.durable-agent'));
    const view = runViewOf(store.location, await store.load(), graph);
    const needed = view.steps.find((step) => step.event === 'DECISION_NEEDED')!;
    expect(needed.state).toBe('awaitingDecision');
    expect(needed.edge).toBe('pendingTool->awaitingDecision');
    expect(needed.tools).toEqual(['write_report']);
    expect(needed.waiting).toEqual({ toolUseId: 'toolu_03', name: 'write_report', needs: 'approval', since: needed.at });
    expect(needed.pending.find((call) => call.id === 'toolu_03')).toMatchObject({ needs: 'approval', verdict: null, recorded: false });
    const decision = view.steps.find((step) => step.event === 'DECISION')!;
    expect(decision.tools).toEqual(['write_report']);
    expect(decision.waiting).toBeNull();
    expect(decision.decided).toEqual([
      {
        toolUseId: 'toolu_03',
        name: 'write_report',
        verdict: 'approved',
        by: 'ana',
        at: expect.any(Number),
        words: 'approved by ana (note: shorter)',
        reason: null,
        note: 'shorter',
        input: JSON.stringify({ content: 'Short report.' }, null, 2),
        text: null,
        since: needed.at,
        waitedMs: decision.at - needed.at,
        seq: decision.seq,
      },
    ]);
    expect(decision.turnDecisions).toEqual(decision.decided);
    expect(decision.pending.find((call) => call.id === 'toolu_03')).toMatchObject({ verdict: 'approved', recorded: false });
    const ran = view.steps.find((step) => step.seq > decision.seq && step.event === 'TOOL_RESULT')!;
    expect(ran.turnDecisions).toEqual(decision.decided);
    // Before the wait, the turn had no decisions.
    expect(view.steps.find((step) => step.seq === needed.seq - 1)!.turnDecisions).toEqual([]);
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

async function open(url: string, viewport = { width: 1280, height: 800 }): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  await page.goto(url);
  await page.locator('li.step[aria-selected="true"]').waitFor();
  return { page, errors };
}

const currentStates = (page: Page) => page.locator('svg.machine .state.current').evaluateAll((nodes) => nodes.map((n) => (n as SVGElement).dataset.state));

describe.skipIf(!chromiumPresent())('the page of a run that waits for a person', () => {
  it('opens on the waiting record: awaitingDecision current in the diagram, every state box readable, the call waiting since when', async () => {
    const dir = tempDir('da-viz-wait-');
    await cli(['demo', '--require-approval', 'write_report', '--no-wait'], dir, WAITING);
    const history = await historyOf(dir);
    const waitingStep = history.find((step) => step.event === 'DECISION_NEEDED')!;
    expect(waitingStep.seq).toBe(history[history.length - 1]!.seq);
    // Opened on the waiting record by its address (the page opens on the last record anyway: go elsewhere first).
    const url = await writePage(dir, 'viz.html');
    const { page, errors } = await open(`${url}#seq=${waitingStep.seq}`);
    await expect(page.locator('li.step[aria-selected="true"]').getAttribute('data-seq')).resolves.toBe(String(waitingStep.seq));
    await expect(currentStates(page)).resolves.toEqual(['awaitingDecision']);
    for (const state of graph.states) {
      const box = (await page.locator(`svg.machine [data-state="${state.name}"]`).boundingBox())!;
      expect(box.width, state.name).toBeGreaterThan(40);
      expect(box.height, state.name).toBeGreaterThan(14);
    }
    await expect(page.locator('svg.machine .edge.taken').evaluateAll((nodes) => nodes.map((n) => (n as SVGElement).dataset.edge))).resolves.toEqual(['pendingTool->awaitingDecision']);
    const item = page.locator(`li.step[data-seq="${waitingStep.seq}"]`);
    await expect(item.locator('.decision-wait').textContent()).resolves.toMatch(/^‖ toolu_03 write_report waits for approval since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC$/);
    await expect(page.locator('tr[data-call="toolu_03"] td').nth(2).textContent()).resolves.toMatch(/^waits for approval since /);
    await expect(page.locator('.facts').textContent()).resolves.toMatch(/waitstoolu_03 write_report waits for approval since .* \(still waiting at the end of the journal\)/);
    await expect(page.locator('.facts').textContent()).resolves.toContain("wait for a person's decision about write_report (toolu_03), then record it");
    await page.screenshot({ path: path.join(ARTIFACTS, 'viz-waiting-1280x800.png') });

    // A record before the wait, then back to it by the address.
    await page.goto(`${url}#seq=3`);
    await page.reload();
    await expect(page.locator('li.step[aria-selected="true"]').getAttribute('data-seq')).resolves.toBe('3');
    await page.goto(`${url}#seq=${waitingStep.seq}`);
    await page.reload();
    await expect(page.locator('li.step[aria-selected="true"]').getAttribute('data-seq')).resolves.toBe(String(waitingStep.seq));
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows the decision on the timeline and, travelling in time, the waiting call and the turn’s decisions', async () => {
    const dir = tempDir('da-viz-approved-');
    await cli(['demo', '--require-approval', 'write_report', '--no-wait'], dir, WAITING);
    await cli(['approve', 'toolu_03', '--input', '{"content":"Short report."}', '--note', 'shorter', '--by', 'ana'], dir);
    await cli(['demo', '--resume', '--require-approval', 'write_report', '--no-wait'], dir);
    const history = await historyOf(dir);
    const needed = history.find((step) => step.event === 'DECISION_NEEDED')!;
    const decision = history.find((step) => step.event === 'DECISION')!;
    const { page, errors } = await open(await writePage(dir, 'viz.html'));

    const decided = page.locator(`li.step[data-seq="${decision.seq}"] .decision`);
    await expect(decided.textContent()).resolves.toMatch(
      /^✔ toolu_03 write_report approved by ana \(note: shorter\) after waiting \d+\.\d s · edited input \{ "content": "Short report\." \}$/,
    );
    await expect(page.locator(`li.step[data-seq="${decision.seq}"] .col-tool`).textContent()).resolves.toBe('write_report');
    // The run stopped to wait (exit 7) and a resume took it up: marked as a wait, not as a crash, and the resume.
    await expect(page.locator('.marker.waited').textContent()).resolves.toContain(`stopped after record ${needed.seq} with a call waiting for a person's decision`);
    await expect(page.locator('.marker.crash').count()).resolves.toBe(0);

    // Time travel: at the waiting record, the call waits; at the decision, the turn's decision and the call approved.
    await page.locator(`li.step[data-seq="${needed.seq}"]`).click();
    await expect(currentStates(page)).resolves.toEqual(['awaitingDecision']);
    await expect(page.locator('tr[data-call="toolu_03"]').getAttribute('class')).resolves.toBe('open awaited');
    await expect(page.locator('.facts').textContent()).resolves.toMatch(/waits for approval since .* \(\d+\.\d s until record \d+\)/);
    await expect(page.locator('.turn-decisions').count()).resolves.toBe(0);

    await page.locator(`li.step[data-seq="${decision.seq}"]`).click();
    await expect(currentStates(page)).resolves.toEqual(['effectRecorded']);
    await expect(page.locator('tr[data-call="toolu_03"] td').nth(2).textContent()).resolves.toBe('approved: runs next');
    await expect(page.locator('.turn-decisions li').allTextContents()).resolves.toEqual([expect.stringMatching(new RegExp(`^✔ toolu_03 write_report approved by ana .* · record ${decision.seq}$`))]);
    await page.screenshot({ path: path.join(ARTIFACTS, 'viz-decision-1280x800.png') });

    await page.keyboard.press('ArrowRight');
    await expect(page.locator('.turn-decisions li').count()).resolves.toBe(1); // still this turn: the call ran
    await expect(page.locator('tr[data-call="toolu_03"] td').nth(2).textContent()).resolves.toBe('recorded in the ledger');
    await page.keyboard.press('End');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows a deadline’s denial with its reason and how long the call waited', async () => {
    const dir = tempDir('da-viz-deadline-');
    await cli(['demo', '--require-approval', 'write_report', '--decision-timeout', '1s', '--wait'], dir);
    const history = await historyOf(dir);
    const decision = history.find((step) => step.event === 'DECISION')!;
    const { page } = await open(await writePage(dir, 'viz.html'));
    await expect(page.locator(`li.step[data-seq="${decision.seq}"] .decision.verdict-denied`).textContent()).resolves.toMatch(
      /^✖ toolu_03 write_report denied by deadline: no decision within 1s after waiting 1\.\d s$/,
    );
    await page.locator(`li.step[data-seq="${decision.seq}"]`).click();
    await expect(page.locator('tr[data-call="toolu_03"] td').nth(2).textContent()).resolves.toBe('denied: recorded in the ledger');
    await page.close();
  });
});
