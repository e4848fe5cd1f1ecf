/**
 * node --expose-gc --import tsx bench/versus.ts --other DIR [--rounds N] [--memory-turns T] [--durable-turns T]
 *
 * This checkout's agent loop against another checkout's (DIR: a worktree of another commit,
 * with node_modules), side by side in one process: the bench's T-turn scripted run in memory
 * (T = 1,000) and on the real file store with fsync (T = 100), each tree warmed up first, then the
 * two interleaved round by round (the order alternating) so that both meet the same load.
 * Prints per-turn medians (wall and CPU) and their ratios, this checkout ÷ the other.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface Tree {
  name: string;
  startRun: (options: unknown) => Promise<{ status: string; turn: number }>;
  benchScript: (turns: number) => unknown[];
  benchRunOptions: (store: unknown, script: unknown[]) => unknown;
  MemoryStore: new (name: string) => unknown;
  FileStore: new (dir: string) => { close(): void };
}

function arg(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

type Mode = 'memory' | 'durable';
const TURNS: Record<Mode, number> = { memory: Number(arg('--memory-turns') ?? 1000), durable: Number(arg('--durable-turns') ?? 100) };

async function load(root: string, name: string): Promise<Tree> {
  const from = (file: string) => import(pathToFileURL(path.join(root, file)).href);
  const [api, workload, memory, file] = await Promise.all([from('src/runtime/run-api.ts'), from('bench/workload.ts'), from('src/store/memory-store.ts'), from('src/store/file-store.ts')]);
  return { name, startRun: api.startRun, benchScript: workload.benchScript, benchRunOptions: workload.benchRunOptions, MemoryStore: memory.MemoryStore, FileStore: file.FileStore };
}

/** Wall and CPU milliseconds per turn of one run. */
async function runOnce(tree: Tree, mode: Mode, scratch: string): Promise<{ ms: number; cpuMs: number }> {
  const turns = TURNS[mode];
  const dir = fs.mkdtempSync(path.join(scratch, `${tree.name}-`));
  const store = mode === 'memory' ? new tree.MemoryStore('versus') : new tree.FileStore(path.join(dir, '.durable-agent'));
  const options = tree.benchRunOptions(store, tree.benchScript(turns));
  (globalThis as { gc?: (options?: unknown) => void }).gc?.({ type: 'minor' });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await tree.startRun(options);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  if (mode === 'durable') (store as { close(): void }).close();
  fs.rmSync(dir, { recursive: true, force: true });
  if (result.status !== 'done' || result.turn !== turns) throw new Error(`${tree.name} ${mode}: ended ${result.status} at turn ${result.turn}`);
  return { ms: ms / turns, cpuMs: (cpu.user + cpu.system) / 1000 / turns };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const other = arg('--other');
  if (!other) throw new Error('give --other DIR: a checkout of the commit to compare with (with its node_modules)');
  const rounds = Number(arg('--rounds') ?? 9);
  const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const trees = [await load(here, 'this'), await load(path.resolve(other), 'other')];
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-versus-'));
  try {
    for (const tree of trees) for (let i = 0; i < 10; i++) await runOnce(tree, 'memory', scratch);
    for (const tree of trees) for (let i = 0; i < 3; i++) await runOnce(tree, 'durable', scratch);
    const samples = new Map<string, { ms: number[]; cpuMs: number[] }>();
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? trees : [...trees].reverse();
      for (const mode of ['memory', 'durable'] as const) {
        for (const tree of order) {
          const { ms, cpuMs } = await runOnce(tree, mode, scratch);
          const key = `${tree.name} ${mode}`;
          if (!samples.has(key)) samples.set(key, { ms: [], cpuMs: [] });
          samples.get(key)!.ms.push(ms);
          samples.get(key)!.cpuMs.push(cpuMs);
        }
      }
    }
    console.log(`versus: ${rounds} interleaved rounds, node ${process.version}, ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)}; this = ${here}, other = ${path.resolve(other)}`);
    console.log('mode     T    this ms/turn (cpu)   other ms/turn (cpu)   this ÷ other (cpu)');
    for (const mode of ['memory', 'durable'] as const) {
      const [a, b] = [samples.get(`this ${mode}`)!, samples.get(`other ${mode}`)!];
      const line = [
        mode.padEnd(8),
        String(TURNS[mode]).padStart(3),
        `${median(a.ms).toFixed(3)} (${median(a.cpuMs).toFixed(3)})`.padStart(20),
        `${median(b.ms).toFixed(3)} (${median(b.cpuMs).toFixed(3)})`.padStart(21),
        `${(median(a.ms) / median(b.ms)).toFixed(2)}× (${(median(a.cpuMs) / median(b.cpuMs)).toFixed(2)}×)`.padStart(20),
      ];
      console.log(line.join(' '));
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
