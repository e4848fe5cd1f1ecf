/**
 * npm run bench:writes [-- --turns T] [-- --reps N]: only the write-calls figure
 * (write-shapes.ts), 6 writes + 2 fdatasyncs a turn against 2 writes + 2 fdatasyncs, same bytes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { measureWriteShapes, writeShapeLines } from './write-shapes.ts';

function argValue(name: string): number | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : Number(process.argv[at + 1]);
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-bench-writes-'));
try {
  const load = os.loadavg()[0]!;
  const figures = await measureWriteShapes(root, { turns: argValue('--turns'), reps: argValue('--reps') });
  console.log(`node ${process.version}, ${os.cpus().length} cores; load average ${load.toFixed(1)} at the start, ${os.loadavg()[0]!.toFixed(1)} at the end`);
  console.log(writeShapeLines(figures).join('\n'));
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
