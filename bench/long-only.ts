/**
 * npm run bench:long [-- --long]: only the long runs with compaction (long-runs.ts), T = 1,000
 * and 10,000 (--long: and 100,000).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { longRunRatios, measureLongRuns } from './long-runs.ts';
import { longRunRatioLines, longRunTable, targetLines } from './report.ts';
import { checkLongRunTargets } from './targets.ts';

const turns = process.argv.includes('--long') ? [1000, 10_000, 100_000] : [1000, 10_000];
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-bench-long-'));
try {
  const started = Date.now();
  const load = os.loadavg()[0]!;
  const figures = measureLongRuns(root, turns, (line) => process.stderr.write(`${line}\n`));
  const ratios = longRunRatios(figures);
  console.log(
    `node ${process.version}, ${os.cpus().length} cores; ${((Date.now() - started) / 1000).toFixed(0)} s; load average ${load.toFixed(1)} at the start, ${os.loadavg()[0]!.toFixed(1)} at the end`,
  );
  console.log(longRunTable(figures));
  console.log(longRunRatioLines(ratios).join('\n'));
  console.log(targetLines(checkLongRunTargets(ratios)));
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
