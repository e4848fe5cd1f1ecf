/**
 * Long runs with compaction, through the real runtime: T = 1,000 and 10,000 turns (and, with
 * --long, 100,000), each written by a process of its own (long-run-child.ts write: startRun, the
 * real FileStore with its fsyncs, client compaction whose context window makes it compact every
 * ~40 turns, the bench workload's ~2 KB tool results), killed right after the ledger entry of
 * its last turn, then resumed in fresh processes (each on a copy of the killed run). The run at
 * the smallest T is written again after the others, so that a slower or faster spell of a shared
 * machine does not fall on one side of the ratios only: its figures are the mean of both.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fsyncDir } from '../src/util/durable-file.ts';
import type { LongResume, LongWrite } from './long-run-child.ts';
import { median } from './stats.ts';

const CHILD = fileURLToPath(new URL('./long-run-child.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

/** Input tokens: the trigger (0.8 of it) is reached every ~40 turns of ~2 KB results. */
export const LONG_CONTEXT_WINDOW = 40_000;
export const LONG_RESUME_REPS = 3;

export interface LongRunFigures {
  turns: number;
  /** One writing process per sample (two at the smallest T: before and after the others). */
  writes: LongWrite[];
  /** Seconds the writing took, per sample (the whole child process). */
  writeSeconds: number[];
  msPerTurn: number;
  cpuMsPerTurn: number;
  /** Over the last LONG_WINDOW turns only. */
  windowMsPerTurn: number;
  windowCpuMsPerTurn: number;
  bytesPerTurn: number;
  windowBytesPerTurn: number;
  syncsPerTurn: number;
  peakRssKb: number;
  baseRssKb: number;
  heapUsedBytes: number;
  resumes: LongResume[];
  resumeMs: number;
  resumeCpuMs: number;
  resumeFirstWriteMs: number;
  resumeFirstWriteCpuMs: number;
  resumePeakRssKb: number;
  resumeBaseRssKb: number;
}

export interface LongRunRatios {
  from: number;
  to: number;
  msPerTurn: number;
  cpuMsPerTurn: number;
  windowMsPerTurn: number;
  windowCpuMsPerTurn: number;
  bytesPerTurn: number;
  peakRss: number;
  heapUsed: number;
  resumeMs: number;
  resumeCpuMs: number;
  resumePeakRss: number;
}

function child(args: string[]): { status: number | null; stdout: string } {
  const ran = spawnSync(process.execPath, ['--expose-gc', '--import', TSX, CHILD, ...args], { encoding: 'utf8', maxBuffer: 1 << 20, stdio: ['ignore', 'pipe', 'inherit'] });
  if (ran.error) throw ran.error;
  return { status: ran.status, stdout: ran.stdout };
}

function lastLine<T>(stdout: string): T {
  return JSON.parse(stdout.trim().split('\n').pop()!) as T;
}

function writeRun(dir: string, turns: number): { write: LongWrite; seconds: number } {
  const started = Date.now();
  const { status, stdout } = child(['write', dir, String(turns), String(LONG_CONTEXT_WINDOW)]);
  // 137: killed (on purpose) right after the last turn's ledger entry.
  if (status !== 137) throw new Error(`the ${turns}-turn writer exited ${status} instead of being killed at its last turn`);
  return { write: lastLine<LongWrite>(stdout), seconds: (Date.now() - started) / 1000 };
}

function resumeRunIn(dir: string, turns: number): LongResume {
  const { status, stdout } = child(['resume', dir, String(turns), String(LONG_CONTEXT_WINDOW)]);
  if (status !== 0) throw new Error(`the resume of the ${turns}-turn run exited ${status}`);
  return lastLine<LongResume>(stdout);
}

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

function figuresOf(turns: number, samples: Array<{ write: LongWrite; seconds: number }>, resumes: LongResume[]): LongRunFigures {
  const writes = samples.map((s) => s.write);
  const per = (pick: (w: LongWrite) => number) => mean(writes.map(pick));
  return {
    turns,
    writes,
    writeSeconds: samples.map((s) => s.seconds),
    msPerTurn: per((w) => w.whole.ms / w.turns),
    cpuMsPerTurn: per((w) => w.whole.cpuMs / w.turns),
    windowMsPerTurn: per((w) => w.window.ms / w.window.turns),
    windowCpuMsPerTurn: per((w) => w.window.cpuMs / w.window.turns),
    bytesPerTurn: per((w) => w.whole.io.bytes / w.turns),
    windowBytesPerTurn: per((w) => w.window.io.bytes / w.window.turns),
    syncsPerTurn: per((w) => w.whole.io.syncs / w.turns),
    peakRssKb: per((w) => w.peakRssKb),
    baseRssKb: per((w) => w.baseRssKb),
    heapUsedBytes: per((w) => w.heapUsedBytes),
    resumes,
    resumeMs: median(resumes.map((r) => r.ms)),
    resumeCpuMs: median(resumes.map((r) => r.cpuMs)),
    resumeFirstWriteMs: median(resumes.map((r) => r.firstWriteMs)),
    resumeFirstWriteCpuMs: median(resumes.map((r) => r.firstWriteCpuMs)),
    resumePeakRssKb: median(resumes.map((r) => r.peakRssKb)),
    resumeBaseRssKb: median(resumes.map((r) => r.baseRssKb)),
  };
}

/** Each resume takes up its own copy of the killed run (a resume finishes the run it takes up). */
function measureResumes(dir: string, turns: number, reps: number): LongResume[] {
  const resumes: LongResume[] = [];
  for (let rep = 0; rep < reps; rep++) {
    const copy = `${dir}-resume-${rep}`;
    fs.cpSync(dir, copy, { recursive: true });
    // The killed run's journal was on the disk (its writer fsynced it); the copy is not until
    // synced here. Left dirty, the resume's first fdatasync would write the whole copy out, a
    // cost that grows with T and that no real resume pays.
    syncTree(copy);
    try {
      resumes.push(resumeRunIn(copy, turns));
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
      // Deleting leaves the file system work that the next fsync would pay for: done now, untimed.
      fsyncDir(path.dirname(copy));
    }
  }
  return resumes;
}

/** fsyncs every file and folder under `dir`, as the writer of what it holds had. */
function syncTree(dir: string): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const at = path.join(dir, entry.name);
    if (entry.isDirectory()) syncTree(at);
    else if (entry.isFile()) {
      const fd = fs.openSync(at, 'r');
      try {
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    }
  }
  fsyncDir(dir);
}

export function measureLongRuns(root: string, turnsList: readonly number[], log: (line: string) => void, reps = LONG_RESUME_REPS): LongRunFigures[] {
  const sorted = [...turnsList].sort((a, b) => a - b);
  const smallest = sorted[0]!;
  const samples = new Map<number, Array<{ write: LongWrite; seconds: number }>>();
  const resumes = new Map<number, LongResume[]>();
  // The smallest T again at the end: the base of every ratio is measured on both sides of the others.
  const order = sorted.length > 1 ? [...sorted, smallest] : sorted;
  order.forEach((turns, index) => {
    const dir = path.join(root, `long-${turns}-${index}`);
    log(`  long runs: writing ${turns.toLocaleString('en-US')} turns with client compaction (real fsyncs), killed at its last turn`);
    const sample = writeRun(dir, turns);
    log(`  long runs: T=${turns}: ${sample.seconds.toFixed(0)} s; ${reps} resumes in fresh processes`);
    samples.set(turns, [...(samples.get(turns) ?? []), sample]);
    resumes.set(turns, [...(resumes.get(turns) ?? []), ...measureResumes(dir, turns, reps)]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return sorted.map((turns) => figuresOf(turns, samples.get(turns)!, resumes.get(turns)!));
}

export function longRunRatios(figures: readonly LongRunFigures[]): LongRunRatios[] {
  const base = figures[0];
  if (!base) return [];
  return figures.slice(1).map((f) => ({
    from: base.turns,
    to: f.turns,
    msPerTurn: f.msPerTurn / base.msPerTurn,
    cpuMsPerTurn: f.cpuMsPerTurn / base.cpuMsPerTurn,
    windowMsPerTurn: f.windowMsPerTurn / base.windowMsPerTurn,
    windowCpuMsPerTurn: f.windowCpuMsPerTurn / base.windowCpuMsPerTurn,
    bytesPerTurn: f.bytesPerTurn / base.bytesPerTurn,
    peakRss: f.peakRssKb / base.peakRssKb,
    heapUsed: f.heapUsedBytes / base.heapUsedBytes,
    resumeMs: f.resumeMs / base.resumeMs,
    resumeCpuMs: f.resumeCpuMs / base.resumeCpuMs,
    resumePeakRss: f.resumePeakRssKb / base.resumePeakRssKb,
  }));
}
