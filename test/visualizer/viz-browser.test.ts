/**
 * The generated page in a real browser (Debian's chromium through playwright-core), for a demo
 * run killed after its third ledger write and resumed, all through the real CLI.
 */
import { chromiumPresent } from '../helpers/system-tools.ts';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import type { HistoryStep } from '../../src/runtime/run-status.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { edgesOf, machineGraphOf } from '../../visualizer/machine-graph.ts';
import { vizPage } from '../../visualizer/viz-page.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { REPO, runCliAsync } from '../helpers/cli.ts';
import { LOOKUP_DONE, LOOKUP_TASK, lookupRun } from '../helpers/lookup-run.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ARTIFACTS = path.join(REPO, 'test', 'artifacts');
const graph = machineGraphOf(agentLoopMachine);

let browser: Browser;
let pageUrl: string;
let history: HistoryStep[];

beforeAll(async () => {
  const dir = tempDir('da-viz-browser-');
  expect((await runCliAsync(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-effect-write:3' } })).code).toBe(137);
  expect((await runCliAsync(['demo', '--resume'], { cwd: dir })).code).toBe(0);
  history = JSON.parse((await runCliAsync(['history', '--json'], { cwd: dir })).stdout) as HistoryStep[];
  const out = path.join(dir, 'viz.html');
  expect((await runCliAsync(['viz', '--out', out], { cwd: dir })).code).toBe(0);
  pageUrl = pathToFileURL(out).href;
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

interface OpenedPage {
  page: Page;
  requests: string[];
  errors: string[];
}

async function openPage(viewport: { width: number; height: number }, hash = ''): Promise<OpenedPage> {
  const page = await browser.newPage({ viewport });
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  await page.goto(pageUrl + hash);
  await page.locator('li.step[aria-selected="true"]').waitFor();
  return { page, requests, errors };
}

const selectedSeq = (page: Page) => page.locator('li.step[aria-selected="true"]').getAttribute('data-seq');
const currentStates = (page: Page) => page.locator('svg.machine .state.current').evaluateAll((nodes) => nodes.map((n) => (n as SVGElement).dataset.state));
const takenEdges = (page: Page) => page.locator('svg.machine .edge.taken').evaluateAll((nodes) => nodes.map((n) => (n as SVGElement).dataset.edge));

describe.skipIf(!chromiumPresent())('the visualizer page', () => {
  it('draws every state of the machine, every arrow, and marks checkpoints A and B', async () => {
    const { page, requests, errors } = await openPage({ width: 1280, height: 800 });
    for (const state of graph.states) {
      const node = page.locator(`svg.machine [data-state="${state.name}"]`);
      await expect(node.isVisible(), state.name).resolves.toBe(true);
      await expect(node.locator('text.name').textContent()).resolves.toBe(state.name);
      const box = (await node.boundingBox())!;
      expect(box.width, state.name).toBeGreaterThan(40); // drawn at a readable size, not scaled to a speck
    }
    await expect(page.locator('svg.machine [data-state]').count()).resolves.toBe(graph.states.length);
    await expect(page.locator('svg.machine .edge').count()).resolves.toBe(edgesOf(graph).length);
    await expect(page.locator('[data-state="pendingTool"] text.badge').textContent()).resolves.toBe('checkpoint A');
    await expect(page.locator('[data-state="closed"] text.badge').textContent()).resolves.toBe('checkpoint B');
    await page.screenshot({ path: path.join(ARTIFACTS, 'viz-1280x800.png') });
    expect(requests.filter((url) => !url.startsWith('file://'))).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('has one timeline item per persisted transition, with the crash and the resume marked where they happened', async () => {
    const { page } = await openPage({ width: 1280, height: 800 });
    const seqs = await page.locator('li.step').evaluateAll((items) => items.map((item) => Number((item as HTMLElement).dataset.seq)));
    expect(seqs).toEqual(history.map((step) => step.seq));
    const states = await page.locator('li.step').evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.state));
    expect(states).toEqual(history.map((step) => step.state));
    // The list, in order: the records up to the third ledger write, the stop, the resume (with its
    // decision), the records the resuming process wrote.
    const killedAt = history.filter((step) => step.point === 'effect-write')[2]!.seq;
    const order = await page.locator('ol.timeline > li').evaluateAll((items) =>
      items.map((item) => (item.classList.contains('step') ? (item as HTMLElement).dataset.seq! : item.className)),
    );
    const seqsBefore = history.filter((step) => step.seq <= killedAt).map((step) => String(step.seq));
    const seqsAfter = history.filter((step) => step.seq > killedAt).map((step) => String(step.seq));
    expect(order).toEqual([...seqsBefore, 'marker crash', 'marker resume', ...seqsAfter]);
    await expect(page.locator('.marker.crash').textContent()).resolves.toContain(`stopped after record ${killedAt}`);
    await expect(page.locator('.marker.resume').textContent()).resolves.toContain(
      'toolu_03 write_report: ledger hit, reusing result, not re-running',
    );
    await page.close();
  });

  it('highlights the state of the clicked step and shows its pending calls', async () => {
    const { page } = await openPage({ width: 1280, height: 800 });
    const saveA = history.find((step) => step.point === 'save-a' && step.turn === 3)!;
    await page.locator(`li.step[data-seq="${saveA.seq}"]`).click();
    await expect(selectedSeq(page)).resolves.toBe(String(saveA.seq));
    await expect(currentStates(page)).resolves.toEqual(['pendingTool']);
    await expect(takenEdges(page)).resolves.toEqual(['closed->pendingTool']);
    const call = page.locator('table.pending tr[data-call="toolu_03"]');
    await expect(call.locator('td').allTextContents()).resolves.toEqual(['toolu_03', 'write_report', 'no result yet', expect.stringContaining('"content"')]);
    await expect(page.locator('.context-title').textContent()).resolves.toContain(`Record ${saveA.seq}: pendingTool`);
    await expect(page.locator('table.ledger tbody tr').count()).resolves.toBe(2);

    await page.locator(`li.step[data-seq="${saveA.seq + 1}"]`).click();
    await expect(currentStates(page)).resolves.toEqual(['effectRecorded']);
    await expect(call.locator('td').nth(2).textContent()).resolves.toBe('recorded in the ledger');
    await expect(page.locator('table.ledger tbody tr').count()).resolves.toBe(3);
    await expect(page.locator('table.ledger tr.new').getAttribute('data-entry')).resolves.toBe('toolu_03');
    await page.close();
  });

  it('steps through the whole run with ← and →, the diagram following', async () => {
    const { page } = await openPage({ width: 1280, height: 800 });
    const last = history[history.length - 1]!;
    await expect(selectedSeq(page)).resolves.toBe(String(last.seq)); // opens on the last record
    for (let i = 0; i < history.length; i++) await page.keyboard.press('ArrowLeft');
    await expect(selectedSeq(page)).resolves.toBe('0');
    for (const step of history) {
      await expect(selectedSeq(page), `record ${step.seq}`).resolves.toBe(String(step.seq));
      await expect(currentStates(page), `record ${step.seq}`).resolves.toEqual([step.state]);
      await expect(page.locator('.context').getAttribute('data-seq')).resolves.toBe(String(step.seq));
      await page.keyboard.press('ArrowRight');
    }
    await expect(selectedSeq(page)).resolves.toBe(String(last.seq)); // → at the end stays there
    await page.close();
  });

  it('opens on the record named in the address (#seq=N)', async () => {
    const { page } = await openPage({ width: 1280, height: 800 }, '#seq=3');
    await expect(selectedSeq(page)).resolves.toBe('3');
    await expect(currentStates(page)).resolves.toEqual([history[3]!.state]);
    await page.close();
  });

  it('reads at 800 px wide: one column, nothing wider than the window', async () => {
    const { page } = await openPage({ width: 800, height: 1000 });
    await expect(page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(800);
    const diagram = (await page.locator('svg.machine').boundingBox())!;
    expect(diagram.x).toBeGreaterThanOrEqual(0);
    expect(diagram.x + diagram.width).toBeLessThanOrEqual(800);
    expect(diagram.width).toBeGreaterThan(600);
    const timeline = (await page.locator('.timeline-panel').boundingBox())!;
    expect(timeline.y).toBeGreaterThan(diagram.y + diagram.height - 1); // stacked below the diagram
    await page.screenshot({ path: path.join(ARTIFACTS, 'viz-800.png'), fullPage: true });
    await page.close();
  });
});

describe.skipIf(!chromiumPresent())('a longer run', () => {
  it('shows the latest messages and ledger entries of a step, and the earlier ones on request', async () => {
    const turns = 14;
    const dir = tempDir('da-viz-long-');
    const store = new FileStore(path.join(dir, '.durable-agent'));
    await lookupRun(store, turns);
    const file = path.join(dir, 'viz.html');
    fs.writeFileSync(file, (await vizPage(store)).html);

    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(pathToFileURL(file).href);
    const messages = page.locator('ol.messages > li');
    await expect(messages.count()).resolves.toBe(12);
    await expect(messages.last().textContent()).resolves.toContain(LOOKUP_DONE);
    const messageCount = 1 + 2 * turns + 1;
    await page.getByRole('button', { name: `show the ${messageCount - 12} earlier messages` }).click();
    await expect(messages.count()).resolves.toBe(messageCount);
    await expect(messages.first().textContent()).resolves.toContain(LOOKUP_TASK);

    const ledgerRows = page.locator('table.ledger tbody tr[data-entry]');
    await expect(ledgerRows.count()).resolves.toBe(12);
    await page.getByRole('button', { name: `show the ${turns - 12} earlier entries` }).click();
    await expect(ledgerRows.evaluateAll((rows) => rows.map((row) => (row as HTMLElement).dataset.entry))).resolves.toEqual(
      Array.from({ length: turns }, (_, i) => `toolu_${i}`),
    );
    await expect(page.locator('.show-earlier').count()).resolves.toBe(0);
    await page.close();
  });
});
