/**
 * bench:compare's benchmarks run from this process (the fleet's, of worker processes, is
 * fleet.ts), each running this tree and REF in turn, repetition after repetition (the order
 * swapped every repetition, so that neither always runs right after the other's garbage or always
 * finds the disk fresh): CPU per turn on the memory store, the file store's turn (real files,
 * fsync on), and the resume of a finished run in fresh processes.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { fsyncDir } from '../../src/util/durable-file.ts';
import { ioNow, ioSince, withoutSyncs } from '../io-counter.ts';
import type { Samples } from './report.ts';
import type { ResumeMeasure } from './resume-child.ts';
import type { TreeParts } from './tree-parts.ts';

export interface Side {
  key: 'ours' | 'ref';
  dir: string;
  parts: TreeParts;
}

export interface ComparePlan {
  name: 'full' | 'quick';
  turnTurns: number[];
  turnReps: Record<number, number>;
  fileTurns: number[];
  fileReps: Record<number, number>;
  resumeTurns: number;
  resumeReps: number;
  /** Turns each tree runs untimed before its first timed run, on the memory store and on files. */
  warmUp: { memory: number; file: number };
  /** Fleets of `workers` worker processes; each repetition drives `runs` runs after `warmUpRuns` a worker. */
  fleet: { workers: number[]; reps: number; runs: number; warmUpRuns: number };
}

export const FULL_PLAN: ComparePlan = {
  name: 'full',
  turnTurns: [50, 200, 1000],
  turnReps: { 50: 31, 200: 21, 1000: 11 },
  fileTurns: [50, 200],
  fileReps: { 50: 15, 200: 9 },
  resumeTurns: 800,
  resumeReps: 15,
  warmUp: { memory: 5000, file: 1000 },
  // ~8,000 records a worker before the clock: a fresh worker on this workload is still getting faster past 3,000.
  fleet: { workers: [1, 2], reps: 5, runs: 200, warmUpRuns: 205 },
};

export const QUICK_PLAN: ComparePlan = {
  name: 'quick',
  turnTurns: [50, 200, 1000],
  turnReps: { 50: 15, 200: 11, 1000: 5 },
  fileTurns: [50, 200],
  fileReps: { 50: 5, 200: 3 },
  resumeTurns: 800,
  resumeReps: 5,
  warmUp: { memory: 3000, file: 500 },
  fleet: { workers: [2], reps: 2, runs: 60, warmUpRuns: 40 },
};

const CHILD = fileURLToPath(new URL('./resume-child.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');
const WARM_UP_CHUNK = 500;
/**
 * Turns in one CPU sample at least: a 50-turn run takes ~5 ms of CPU, about what one young
 * collection can add, so a sample at small T is several runs of T turns back to back.
 */
const MIN_TURNS_PER_SAMPLE = 1000;

/** This tree first on even repetitions, REF first on odd ones. */
export function orderOf<T>(sides: readonly [T, T], rep: number): [T, T] {
  return rep % 2 === 0 ? [sides[0], sides[1]] : [sides[1], sides[0]];
}

/** Clears the young generation between runs (see run-bench.ts: a full gc() would throw the compiled code away). */
function collectGarbage(): void {
  (globalThis as { gc?: (options: { type: 'minor' }) => void }).gc?.({ type: 'minor' });
}

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

async function runTurns(side: Side, store: unknown, turns: number): Promise<void> {
  const { benchRunOptions, benchScript, startRun } = side.parts;
  const result = await startRun(benchRunOptions(store, benchScript(turns)));
  if (result.status !== 'done' || result.turn !== turns) throw new Error(`${side.key}: a ${turns}-turn run ended ${result.status} at turn ${result.turn}`);
}

function stateFolder(dir: string): string {
  return path.join(dir, '.durable-agent');
}

async function fileRun(side: Side, dir: string, turns: number): Promise<void> {
  const store = new side.parts.FileStore(stateFolder(dir));
  try {
    await runTurns(side, store, turns);
  } finally {
    store.close();
  }
}

/**
 * Untimed turns on each tree before the first timed run: a fresh process runs its first few
 * thousand turns 2-5× slower while V8 compiles the hot code, and each tree's code is its own.
 */
async function warmUp(sides: readonly Side[], root: string, memoryTurns: number, fileTurns: number): Promise<void> {
  for (const side of sides) {
    for (let done = 0; done < memoryTurns; done += WARM_UP_CHUNK) await runTurns(side, new side.parts.MemoryStore('warm-up'), WARM_UP_CHUNK);
    for (let done = 0; done < fileTurns; done += WARM_UP_CHUNK) {
      const dir = path.join(root, `warm-${side.key}-${done}`);
      await fileRun(side, dir, Math.min(WARM_UP_CHUNK, fileTurns - done));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}

export async function measureTurnCpu(sides: readonly [Side, Side], root: string, plan: ComparePlan, log: (line: string) => void): Promise<Samples[]> {
  await warmUp(sides, root, plan.warmUp.memory, 0);
  log(`  turn: warm-up done (${plan.warmUp.memory.toLocaleString('en-US')} turns in memory on each tree)`);
  const samples: Samples[] = [];
  for (const turns of plan.turnTurns) {
    const runs = Math.ceil(MIN_TURNS_PER_SAMPLE / turns);
    const cpu = { ours: [] as number[], ref: [] as number[] };
    for (let rep = 0; rep < plan.turnReps[turns]!; rep++) {
      for (const side of orderOf(sides, rep)) {
        const stores = Array.from({ length: runs }, () => new side.parts.MemoryStore('compare'));
        collectGarbage();
        const cpu0 = process.cpuUsage();
        for (const store of stores) await runTurns(side, store, turns);
        cpu[side.key].push(cpuMsSince(cpu0) / (turns * runs));
      }
    }
    log(`  turn: T=${turns} done (${runs} run(s) a sample)`);
    samples.push({ benchmark: 'turn', name: `CPU per turn, memory store, T=${turns}`, unit: 'ms', ...cpu });
  }
  return samples;
}

export async function measureFileTurn(sides: readonly [Side, Side], root: string, plan: ComparePlan, log: (line: string) => void): Promise<Samples[]> {
  await warmUp(sides, root, 0, plan.warmUp.file);
  fsyncDir(root);
  log(`  file: warm-up done (${plan.warmUp.file.toLocaleString('en-US')} turns on files on each tree)`);
  const samples: Samples[] = [];
  for (const turns of plan.fileTurns) {
    const ms = { ours: [] as number[], ref: [] as number[] };
    const syncs = { ours: [] as number[], ref: [] as number[] };
    for (let rep = 0; rep < plan.fileReps[turns]!; rep++) {
      for (const side of orderOf(sides, rep)) {
        const dir = path.join(root, `file-${side.key}-${turns}-${rep}`);
        collectGarbage();
        const io0 = ioNow();
        const t0 = performance.now();
        await fileRun(side, dir, turns);
        ms[side.key].push((performance.now() - t0) / turns);
        syncs[side.key].push(ioSince(io0).syncs / turns);
        // Freeing the blocks is left to the file system's next sync: done now, untimed, not by the next run.
        fs.rmSync(dir, { recursive: true, force: true });
        fsyncDir(root);
      }
    }
    log(`  file: T=${turns} done`);
    samples.push({ benchmark: 'file', name: `file-store turn, T=${turns}`, unit: 'ms', ...ms });
    samples.push({ benchmark: 'file', name: `fsyncs per turn, file store, T=${turns}`, unit: '', ...syncs });
  }
  return samples;
}

function digestOf(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** A finished run of `turns` turns written by the tree's own runtime and file store; returns its state folder. */
async function writeFinishedRun(side: Side, root: string, turns: number): Promise<string> {
  const dir = path.join(root, `resume-${side.key}`);
  // fsync made a no-op for this input only: the bytes are those a real run writes, without the wait.
  await withoutSyncs(() => fileRun(side, dir, turns));
  return stateFolder(dir);
}

function resumeInChild(side: Side, folder: string): ResumeMeasure {
  const stdout = execFileSync(process.execPath, ['--import', TSX, CHILD, side.dir, folder], { encoding: 'utf8' });
  const measure = JSON.parse(stdout.trim().split('\n').pop()!) as ResumeMeasure;
  if (measure.status !== 'done') throw new Error(`${side.key}: the resume of a finished run answered ${measure.status} at turn ${measure.turn}`);
  return measure;
}

export async function measureResume(sides: readonly [Side, Side], root: string, plan: ComparePlan, log: (line: string) => void): Promise<Samples[]> {
  const turns = plan.resumeTurns;
  const folders = { ours: await writeFinishedRun(sides[0], root, turns), ref: await writeFinishedRun(sides[1], root, turns) };
  const journal = (key: 'ours' | 'ref') => path.join(folders[key], 'journal.jsonl');
  const before = { ours: digestOf(journal('ours')), ref: digestOf(journal('ref')) };
  log(`  resume: a finished ${turns}-turn run written by each tree; ${plan.resumeReps} fresh processes each`);
  const ms = { ours: [] as number[], ref: [] as number[] };
  const cpu = { ours: [] as number[], ref: [] as number[] };
  for (let rep = 0; rep < plan.resumeReps; rep++) {
    for (const side of orderOf(sides, rep)) {
      const measure = resumeInChild(side, folders[side.key]);
      ms[side.key].push(measure.ms);
      cpu[side.key].push(measure.cpuMs);
    }
  }
  for (const key of ['ours', 'ref'] as const) if (digestOf(journal(key)) !== before[key]) throw new Error(`the resumes changed ${journal(key)}: the runs measured were not the same`);
  return [
    { benchmark: 'resume', name: `resume of a finished ${turns}-turn run`, unit: 'ms', ...ms },
    { benchmark: 'resume', name: `resume of a finished ${turns}-turn run, CPU`, unit: 'ms', ...cpu },
  ];
}
