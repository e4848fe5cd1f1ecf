/**
 * A diagnostic of the disk, never a target: what one fdatasync of a small append costs as a
 * function of the time since the last one. The raw floor issues its fdatasyncs back to back;
 * a loop cannot (it calls the model and runs the tool between them), and on some disks (this
 * project's VMs among them) an fdatasync costs more the longer the device sat since the last
 * one, whether the CPU was busy or idle meanwhile. Printed beside the floors so that a reader
 * sees how much of "ours ÷ raw floor" the disk charges for the gaps alone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

export interface FsyncGapFigure {
  /** Time spent between one fdatasync's return and the next append. */
  gapMs: number;
  /** 'idle': asleep (a loop waiting for the model); 'busy': the CPU spinning (a loop computing). */
  mode: 'idle' | 'busy';
  appends: number;
  medianSyncMs: number;
  p10SyncMs: number;
  p90SyncMs: number;
}

export const DEFAULT_GAPS_MS = [0, 0.1, 0.3, 1, 3] as const;

/**
 * For each gap and mode, `appends` appends of `bytes` bytes to a new file in `dir`, each
 * fdatasynced after the gap; the gaps are measured interleaved (gap after gap, round after
 * round) so that a slow spell of a shared disk falls on all of them alike.
 */
export function measureFsyncGaps(dir: string, options: { appends?: number; bytes?: number; gapsMs?: readonly number[]; rounds?: number } = {}): FsyncGapFigure[] {
  const appends = options.appends ?? 120;
  const rounds = options.rounds ?? 3;
  const gaps = options.gapsMs ?? DEFAULT_GAPS_MS;
  const line = Buffer.alloc(options.bytes ?? 1500, 0x61);
  line[line.length - 1] = 0x0a;
  const cases = gaps.flatMap((gapMs) => (gapMs === 0 ? [{ gapMs, mode: 'idle' as const }] : [{ gapMs, mode: 'idle' as const }, { gapMs, mode: 'busy' as const }]));
  const samples = cases.map(() => [] as number[]);
  fs.mkdirSync(dir, { recursive: true });
  const perRound = Math.max(1, Math.ceil(appends / rounds));
  for (let round = 0; round < rounds; round++) {
    cases.forEach((gap, index) => {
      const file = path.join(dir, `gap-${index}-${round}.bin`);
      samples[index]!.push(...timedAppends(file, line, perRound, gap.gapMs, gap.mode));
      fs.rmSync(file, { force: true });
    });
  }
  return cases.map((gap, index) => {
    const sorted = samples[index]!.sort((a, b) => a - b);
    return { ...gap, appends: sorted.length, medianSyncMs: quantile(sorted, 0.5), p10SyncMs: quantile(sorted, 0.1), p90SyncMs: quantile(sorted, 0.9) };
  });
}

function timedAppends(file: string, line: Buffer, count: number, gapMs: number, mode: 'idle' | 'busy'): number[] {
  const fd = fs.openSync(file, 'w');
  const times: number[] = [];
  try {
    fs.fsyncSync(fd);
    let end = 0;
    for (let i = 0; i < count; i++) {
      if (gapMs > 0) (mode === 'idle' ? sleepFor : spinFor)(gapMs);
      for (let done = 0; done < line.length; ) done += fs.writeSync(fd, line, done, line.length - done, end + done);
      end += line.length;
      const start = performance.now();
      fs.fdatasyncSync(fd);
      times.push(performance.now() - start);
    }
  } finally {
    fs.closeSync(fd);
  }
  return times;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Asleep for at least `ms` (a timed wait may wake a little early: it waits again for the rest). */
function sleepFor(ms: number): void {
  const start = performance.now();
  for (let left = ms; left > 0; left = ms - (performance.now() - start)) Atomics.wait(sleeper, 0, 0, left);
}

function spinFor(ms: number): void {
  const start = performance.now();
  while (performance.now() - start < ms);
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** One line per gap: median (p10-p90) fdatasync ms, idle and busy, and each median ÷ back to back. */
export function fsyncGapLines(figures: readonly FsyncGapFigure[]): string[] {
  const base = figures.find((figure) => figure.gapMs === 0)?.medianSyncMs ?? Number.NaN;
  const cell = (figure: FsyncGapFigure | undefined) =>
    figure ? `${figure.medianSyncMs.toFixed(3)} ms (${figure.p10SyncMs.toFixed(3)}-${figure.p90SyncMs.toFixed(3)}), ${(figure.medianSyncMs / base).toFixed(2)}×` : '—';
  const gaps = [...new Set(figures.map((figure) => figure.gapMs))].sort((a, b) => a - b);
  return gaps.map((gapMs) => {
    const idle = figures.find((figure) => figure.gapMs === gapMs && figure.mode === 'idle');
    const busy = figures.find((figure) => figure.gapMs === gapMs && figure.mode === 'busy');
    return gapMs === 0
      ? `  back to back (the raw floor's schedule): ${cell(idle)}`
      : `  after ${gapMs} ms  asleep: ${cell(idle)};  computing: ${cell(busy)}`;
  });
}
