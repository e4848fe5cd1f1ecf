/**
 * npm run bench:attach: only the attach-by-id section of the bench (attach-by-id.ts): a folder
 * of 10 finished runs and one of 10,000, side by side in one process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { attachLines, attachTargets, measureAttachById } from './attach-by-id.ts';
import { installIoCounter } from './io-counter.ts';
import { targetLines } from './report.ts';

installIoCounter();
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-bench-attach-'));
try {
  const started = Date.now();
  const figures = await measureAttachById(root, [10, 10_000], 31, (line) => process.stderr.write(`${line}\n`));
  console.log(`node ${process.version}, ${os.cpus().length} cores; ${((Date.now() - started) / 1000).toFixed(0)} s; load average ${os.loadavg()[0]!.toFixed(1)}`);
  console.log('Attach by id (startRun under the id of a finished run: its stored result, nothing run; median of 31, the folders taking turns):');
  console.log(attachLines(figures).join('\n'));
  console.log(targetLines(attachTargets(figures)));
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
