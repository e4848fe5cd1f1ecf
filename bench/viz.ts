/**
 * What the visualizer costs: the layout, reading a long run, the page's size, and in chromium
 * the time to open the page and to step once. Prints figures; asserts nothing.
 *
 *   npx tsx bench/viz.ts [TURNS]      (default 300 turns, one read-only call each, 2 kB results)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { agentLoopMachine } from '../machines/agent-loop.machine.ts';
import { FileStore } from '../src/store/file-store.ts';
import { launchChromium } from '../test/helpers/chromium.ts';
import { lookupRun } from '../test/helpers/lookup-run.ts';
import { layoutDiagram } from '../visualizer/diagram-layout.ts';
import { machineGraphOf } from '../visualizer/machine-graph.ts';
import { runViewOf } from '../visualizer/run-timeline.ts';
import { vizPage } from '../visualizer/viz-page.ts';

const turns = Number(process.argv[2] ?? 300);
const since = (start: number) => `${(performance.now() - start).toFixed(0)} ms`;
const kB = (bytes: number) => `${(bytes / 1024).toFixed(0)} kB`;

const graph = machineGraphOf(agentLoopMachine);
let start = performance.now();
await layoutDiagram(graph);
console.log(`layout, first (loads ELK)      ${since(start)}`);
start = performance.now();
await layoutDiagram(graph);
console.log(`layout, again                  ${since(start)}`);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'viz-bench-'));
try {
  const store = new FileStore(path.join(dir, '.durable-agent'));
  await lookupRun(store, turns, ` ${'x'.repeat(2000)}`);

  const loaded = await store.load();
  start = performance.now();
  const run = runViewOf(store.location, loaded, graph);
  console.log(`read the run                   ${since(start)} (${run.steps.length} records, journal ${kB(loaded.totalBytes)})`);
  start = performance.now();
  const page = await vizPage(store);
  console.log(`whole page                     ${since(start)} (${kB(Buffer.byteLength(page.html))} of HTML)`);

  const file = path.join(dir, 'viz.html');
  fs.writeFileSync(file, page.html);
  const browser = await launchChromium();
  try {
    const tab = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    start = performance.now();
    await tab.goto(pathToFileURL(file).href);
    await tab.locator('li.step[aria-selected="true"]').waitFor();
    console.log(`open in chromium               ${since(start)}`);
    const stepMs = await tab.evaluate(() => {
      const begin = performance.now();
      for (let i = 0; i < 20; i++) document.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowLeft' }));
      return (performance.now() - begin) / 20;
    });
    console.log(`one step (←) near the end      ${stepMs.toFixed(1)} ms`);
  } finally {
    await browser.close();
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
