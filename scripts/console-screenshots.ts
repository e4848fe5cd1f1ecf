/**
 * npm run docs:screenshots (the build, then node --import tsx scripts/console-screenshots.ts): the
 * pictures of the web console in docs/console.md, docs/console-list.png (the list of runs) and
 * docs/console-run.png (a run that waits for an approval), taken at 1280 px in Debian's chromium
 * through playwright-core from three real demo runs made by the built CLI in a scratch folder:
 * one finished, one stopped at its turn limit, one waiting.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startConsole } from '../src/console/console-server.ts';
import { launchChromium } from '../test/helpers/chromium.ts';

const REPO = path.join(import.meta.dirname, '..');
const DOCS = path.join(REPO, 'docs');
const VIEWPORT = { width: 1280, height: 760 };
// A fixed name, so the path the run page shows is the same at every taking.
const scratch = path.join(os.tmpdir(), 'durable-agent-console-shots');
fs.rmSync(scratch, { recursive: true, force: true });
// A folder whose name reads well in the list's location column.
const dir = path.join(scratch, 'reports');
fs.mkdirSync(dir, { recursive: true });

/** A demo run that must end with `exit` (0 done, 5 stopped at its turn limit, 7 waiting). */
function demo(exit: number, ...args: string[]): void {
  const made = spawnSync(process.execPath, [path.join(REPO, 'bin', 'durable-agent.mjs'), 'demo', ...args], { cwd: dir, encoding: 'utf8' });
  if (made.status !== exit) throw new Error(`demo ${args.join(' ')} exited ${made.status}, not ${exit}: ${made.stdout}${made.stderr}`);
}

try {
  demo(0, '--run', 'weekly-report');
  demo(5, '--run', 'draft-notes', '--max-turns', '1');
  demo(7, '--run', 'q3-summary', '--require-approval', 'write_report', '--no-wait');
  const running = await startConsole({ roots: [path.join(dir, '.durable-agent')], port: 0, user: 'ana' });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: VIEWPORT });
    await page.goto(running.url);
    await page.locator('tr.run-row[data-run="q3-summary"]').waitFor();
    await page.locator('tr.run-row[data-run="weekly-report"]').waitFor();
    await page.locator('tr.run-row[data-run="draft-notes"]').waitFor();
    fs.mkdirSync(DOCS, { recursive: true });
    // The list down to the end of its box.
    const list = (await page.locator('main section.box').boundingBox())!;
    await page.screenshot({ path: path.join(DOCS, 'console-list.png'), clip: { x: 0, y: 0, width: VIEWPORT.width, height: Math.ceil(list.y + list.height + 12) } });
    await page.locator('tr.run-row[data-run="q3-summary"] a').click();
    await page.locator('#live-status', { hasText: 'live' }).waitFor();
    await page.locator('.decision[data-call="toolu_03"]').waitFor();
    await page.locator('#diagram [data-state="awaitingDecision"].current').waitFor();
    // Down to the machine's diagram, centred on the state the run waits in.
    await page.setViewportSize({ width: VIEWPORT.width, height: 1000 });
    const diagram = (await page.locator('.diagram-box').boundingBox())!;
    await page.screenshot({ path: path.join(DOCS, 'console-run.png'), fullPage: true, clip: { x: 0, y: 0, width: VIEWPORT.width, height: Math.ceil(diagram.y + diagram.height + 22) } });
    await page.close();
  } finally {
    await browser.close();
    await running.close();
  }
  for (const name of ['console-list.png', 'console-run.png']) console.log(`docs/${name}: ${(fs.statSync(path.join(DOCS, name)).size / 1024).toFixed(0)} KB`);
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
