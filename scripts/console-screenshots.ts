/**
 * node --import tsx scripts/console-screenshots.ts: the README's pictures of the web console,
 * docs/console-list.png (the list of runs) and docs/console-run.png (a run that waits for an
 * approval), taken in Debian's chromium through playwright-core from two real demo runs made by
 * the built CLI (npm run build first) in a scratch folder: one finished, one waiting.
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

function demo(...args: string[]): number | null {
  const made = spawnSync(process.execPath, [path.join(REPO, 'bin', 'durable-agent.mjs'), 'demo', ...args], { cwd: dir, encoding: 'utf8' });
  if (made.status === null || (made.status !== 0 && made.status !== 7)) throw new Error(`demo ${args.join(' ')} failed: ${made.stdout}${made.stderr}`);
  return made.status;
}

try {
  demo('--run', 'weekly-report');
  demo('--run', 'q3-summary', '--require-approval', 'write_report', '--no-wait');
  const running = await startConsole({ roots: [path.join(dir, '.durable-agent')], port: 0, user: 'ana' });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: VIEWPORT });
    await page.goto(running.url);
    await page.locator('tr.run-row[data-run="q3-summary"]').waitFor();
    await page.locator('tr.run-row[data-run="weekly-report"]').waitFor();
    fs.mkdirSync(DOCS, { recursive: true });
    await page.screenshot({ path: path.join(DOCS, 'console-list.png'), clip: { x: 0, y: 0, width: VIEWPORT.width, height: 300 } });
    await page.locator('tr.run-row[data-run="q3-summary"] a').click();
    await page.locator('#live-status', { hasText: 'live' }).waitFor();
    await page.locator('.decision[data-call="toolu_03"]').waitFor();
    await page.setViewportSize({ width: VIEWPORT.width, height: 1000 });
    await page.screenshot({ path: path.join(DOCS, 'console-run.png') });
    await page.close();
  } finally {
    await browser.close();
    await running.close();
  }
  for (const name of ['console-list.png', 'console-run.png']) console.log(`docs/${name}: ${(fs.statSync(path.join(DOCS, name)).size / 1024).toFixed(0)} KB`);
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
