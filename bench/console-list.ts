/**
 * node --import tsx bench/console-list.ts: how long the console's list of runs takes to answer
 * for a folder of 100 runs and one of 10,000 (copies of one finished demo run, each its own run
 * by id), over HTTP: the first answer (every journal read) and the next ones (median of 9: the
 * rows of runs that did not change are kept, a stat each), side by side.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startConsole } from '../src/console/console-server.ts';

const SIZES = [100, 10_000];
const REPEATS = 9;
const TOKEN = 'bench:console-list-0123456789';
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-bench-console-'));

function folderOf(count: number): string {
  const dir = path.join(root, `runs-${count}`);
  fs.mkdirSync(dir);
  const made = spawnSync(process.execPath, [path.join(import.meta.dirname, '..', 'bin', 'durable-agent.mjs'), 'demo', '--run', 'seed'], { cwd: dir, encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`the seed run failed: ${made.stderr}`);
  const runs = path.join(dir, '.durable-agent', 'runs');
  for (let n = 1; n < count; n++) fs.cpSync(path.join(runs, 'seed'), path.join(runs, `run-${String(n).padStart(5, '0')}`), { recursive: true });
  return dir;
}

async function timeList(origin: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${origin}/api/runs`, { headers: { authorization: `Bearer ${TOKEN}` } });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return performance.now() - started;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

try {
  const results: Array<{ runs: number; firstMs: number; nextMs: number }> = [];
  for (const count of SIZES) {
    const dir = folderOf(count);
    const running = await startConsole({ roots: [path.join(dir, '.durable-agent')], port: 0, token: TOKEN, user: 'bench' });
    try {
      const firstMs = await timeList(running.origin);
      const next: number[] = [];
      for (let i = 0; i < REPEATS; i++) next.push(await timeList(running.origin));
      results.push({ runs: count, firstMs, nextMs: median(next) });
    } finally {
      await running.close();
    }
  }
  console.log(`node ${process.version}, ${os.cpus().length} cores; load average ${os.loadavg()[0]!.toFixed(1)}`);
  console.log('The console\'s list of runs (GET /api/runs, at most 1,000 rows an answer), over HTTP:');
  for (const { runs, firstMs, nextMs } of results) console.log(`  ${String(runs).padStart(6)} runs: first answer ${firstMs.toFixed(0)} ms, next answers ${nextMs.toFixed(1)} ms (median of ${REPEATS})`);
  const [small, large] = results;
  console.log(`  10,000 runs against 100: ${(large!.nextMs / small!.nextMs).toFixed(1)}× (next answers), ${(large!.firstMs / small!.firstMs).toFixed(1)}× (first)`);
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
