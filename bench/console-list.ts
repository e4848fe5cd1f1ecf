/**
 * node --import tsx bench/console-list.ts: how long the console's list of runs takes to answer
 * for a folder of 100 runs and one of 10,000 (copies of one finished demo run, each its own run
 * by id), over HTTP, in one run of the bench: the first answer (every journal read, a watch set
 * on every run folder), the next ones (median of 15: nothing changed, so nothing is read), and an
 * answer right after one run's journal changed (median of 15: that run read again), with the
 * ratio of 10,000 runs to 100 for each. An answer holds the page's first 100 rows unless it asks
 * for more, so both folders send the same bytes; answers of 1,000 rows (?limit=1000, what the
 * page asks after nine "more"s) are timed too. Target: ≤ 2× for the next answers.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startConsole } from '../src/console/console-server.ts';

const SIZES = [100, 10_000];
const REPEATS = 15;
const WARM_UP = 20;
const FULL = 1000;
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

async function timeList(origin: string, expected: number, limit?: number): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${origin}/api/runs${limit ? `?limit=${limit}` : ''}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const bytes = await response.arrayBuffer();
  const ms = performance.now() - started;
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const body = JSON.parse(Buffer.from(bytes).toString('utf8')) as { total: number };
  if (body.total !== expected) throw new Error(`the list has ${body.total} runs, not ${expected}`);
  return ms;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

interface Figures {
  runs: number;
  firstMs: number;
  nextMs: number;
  changedMs: number;
  /** Next answers of 1,000 rows (?limit=1000): 100 rows from the folder of 100. */
  fullMs: number;
}

try {
  const results: Figures[] = [];
  for (const count of SIZES) {
    const dir = folderOf(count);
    const notices: string[] = [];
    const running = await startConsole({ roots: [path.join(dir, '.durable-agent')], port: 0, token: TOKEN, user: 'bench', notice: (line) => notices.push(line) });
    try {
      const firstMs = await timeList(running.origin, count);
      // The server's code warmed up first, so the smaller folder, measured first, is not the one that pays for it.
      for (let i = 0; i < WARM_UP; i++) await timeList(running.origin, count);
      const next: number[] = [];
      for (let i = 0; i < REPEATS; i++) next.push(await timeList(running.origin, count));
      // One run's journal written again (the same records, a new file): that run alone is read again.
      const journal = path.join(dir, '.durable-agent', 'runs', 'seed', 'journal.jsonl');
      const bytes = fs.readFileSync(journal);
      const changed: number[] = [];
      for (let i = 0; i < REPEATS; i++) {
        fs.writeFileSync(`${journal}.new`, bytes);
        fs.renameSync(`${journal}.new`, journal);
        changed.push(await timeList(running.origin, count));
      }
      const full: number[] = [];
      for (let i = 0; i < REPEATS; i++) full.push(await timeList(running.origin, count, FULL));
      for (const line of notices) console.log(line);
      results.push({ runs: count, firstMs, nextMs: median(next), changedMs: median(changed), fullMs: median(full) });
    } finally {
      await running.close();
    }
  }
  console.log(`node ${process.version}, ${os.cpus().length} cores; load average ${os.loadavg()[0]!.toFixed(1)}`);
  console.log("The console's list of runs (GET /api/runs: the newest 100 rows, as the page first asks), over HTTP:");
  for (const { runs, firstMs, nextMs, changedMs, fullMs } of results) {
    console.log(`  ${String(runs).padStart(6)} runs: first answer ${firstMs.toFixed(0)} ms; next answers ${nextMs.toFixed(1)} ms; after one run changed ${changedMs.toFixed(1)} ms; ?limit=${FULL} ${fullMs.toFixed(1)} ms (medians of ${REPEATS})`);
  }
  const [small, large] = results as [Figures, Figures];
  const ratio = large.nextMs / small.nextMs;
  console.log(`  10,000 runs against 100: ${ratio.toFixed(2)}× (next answers; target ≤ 2×: ${ratio <= 2 ? 'met' : 'NOT met'}), ${(large.changedMs / small.changedMs).toFixed(2)}× (after one run changed), ${(large.fullMs / small.fullMs).toFixed(2)}× (?limit=${FULL}: 1,000 rows against 100), ${(large.firstMs / small.firstMs).toFixed(1)}× (first)`);
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
