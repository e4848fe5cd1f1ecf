/**
 * npm run bench:snapshots [-- --long]: only the long-run section of the bench (snapshot-bench.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { measureSnapshots, snapshotRatios, snapshotReport } from './snapshot-bench.ts';

const turns = process.argv.includes('--long') ? [1000, 10_000, 100_000] : [1000, 10_000];
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-bench-snapshots-'));
try {
  const started = Date.now();
  const figures = measureSnapshots(root, turns, 3, (line) => process.stderr.write(`${line}\n`));
  console.log(`node ${process.version}, ${os.cpus().length} cores; ${((Date.now() - started) / 1000).toFixed(0)} s; load average ${os.loadavg()[0]!.toFixed(1)}`);
  console.log(snapshotReport(figures, snapshotRatios(figures)));
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
