/**
 * Flat in length: long runs with a bounded live context (see snapshot-journal.ts), written with
 * snapshot records and without (today's runtime), each in a fresh process (its peak RSS is the
 * writer's), then resumed in fresh processes. Prints the ratios issue 14 names, measured side by
 * side in one run: per-turn time and bytes at the largest T against T = 1,000, the writer's peak
 * RSS, and the resume's time and peak RSS.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildMeasure } from './resume-child.ts';
import { measureInChild } from './resume-measure.ts';
import { resumeStoreDir } from './resume-journal.ts';
import type { WriteMeasure } from './snapshot-journal.ts';
import { median } from './stats.ts';

const WRITER = fileURLToPath(new URL('./snapshot-journal.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

export interface SnapshotFigures {
  turns: number;
  mode: WriteMeasure['mode'];
  write: WriteMeasure;
  resumeMs: number;
  resumeCpuMs: number;
  resumePeakRssKb: number;
  resumeDetail: string;
}

export interface SnapshotRatios {
  mode: WriteMeasure['mode'];
  from: number;
  to: number;
  msPerTurn: number;
  bytesPerTurn: number;
  writerPeakRss: number;
  resumeMs: number;
  /** The resume's CPU time: less at the mercy of a busy machine than its wall time. */
  resumeCpuMs: number;
  resumePeakRss: number;
}

function writeInChild(dir: string, turns: number, mode: WriteMeasure['mode']): WriteMeasure {
  const stdout = execFileSync(process.execPath, ['--import', TSX, WRITER, 'write', dir, String(turns), mode], { encoding: 'utf8', maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').pop()!) as WriteMeasure;
}

export function measureSnapshots(root: string, turnsList: readonly number[], reps: number, log: (line: string) => void): SnapshotFigures[] {
  const figures: SnapshotFigures[] = [];
  for (const turns of turnsList) {
    for (const mode of ['snapshots', 'plain'] as const) {
      const dir = path.join(root, `snapshot-${mode}-${turns}`);
      log(`  snapshots: writing a ${turns}-turn run (${mode}; fsync off for this input only), then ${reps} resumes`);
      const write = writeInChild(dir, turns, mode);
      const resumes: ChildMeasure[] = [];
      for (let rep = 0; rep < reps; rep++) resumes.push(measureInChild('resume', resumeStoreDir(dir)));
      figures.push({
        turns,
        mode,
        write,
        resumeMs: median(resumes.map((r) => r.ms)),
        resumeCpuMs: median(resumes.map((r) => r.cpuMs)),
        resumePeakRssKb: median(resumes.map((r) => r.peakRssKb)),
        resumeDetail: resumes[0]!.detail,
      });
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  return figures;
}

export function snapshotRatios(figures: readonly SnapshotFigures[]): SnapshotRatios[] {
  const ratios: SnapshotRatios[] = [];
  for (const mode of ['snapshots', 'plain'] as const) {
    const mine = figures.filter((f) => f.mode === mode).sort((a, b) => a.turns - b.turns);
    const base = mine[0];
    if (!base) continue;
    for (const other of mine.slice(1)) {
      ratios.push({
        mode,
        from: base.turns,
        to: other.turns,
        msPerTurn: other.write.msPerTurn / base.write.msPerTurn,
        bytesPerTurn: other.write.bytesPerTurn / base.write.bytesPerTurn,
        writerPeakRss: other.write.peakRssKb / base.write.peakRssKb,
        resumeMs: other.resumeMs / base.resumeMs,
        resumeCpuMs: other.resumeCpuMs / base.resumeCpuMs,
        resumePeakRss: other.resumePeakRssKb / base.resumePeakRssKb,
      });
    }
  }
  return ratios;
}

export function snapshotReport(figures: readonly SnapshotFigures[], ratios: readonly SnapshotRatios[]): string {
  const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;
  const rows = figures.map(
    (f) =>
      `  T=${String(f.turns).padStart(6)} ${f.mode.padEnd(9)} ${f.write.msPerTurn.toFixed(3).padStart(7)} ms/turn ${f.write.bytesPerTurn.toFixed(0).padStart(6)} B/turn ` +
      `writer peak ${mb(f.write.peakRssKb).padStart(7)}  journal ${(f.write.journalBytes / 1e6).toFixed(1).padStart(7)} MB, ${String(f.write.snapshots).padStart(5)} snapshots  ` +
      `resume ${f.resumeMs.toFixed(0).padStart(6)} ms (cpu ${f.resumeCpuMs.toFixed(0)} ms), peak ${mb(f.resumePeakRssKb)}`,
  );
  const ratioRows = ratios.map(
    (r) =>
      `  ${r.mode.padEnd(9)} T=${r.to} vs T=${r.from}: per-turn time ${r.msPerTurn.toFixed(2)}x, bytes ${r.bytesPerTurn.toFixed(2)}x, ` +
      `writer peak RSS ${r.writerPeakRss.toFixed(2)}x, resume ${r.resumeMs.toFixed(2)}x (cpu ${r.resumeCpuMs.toFixed(2)}x, peak RSS ${r.resumePeakRss.toFixed(2)}x)`,
  );
  return [
    `Long runs with a bounded live context (compacted every 50 turns; per turn = the last 1,000 turns; fsync off for these writes):`,
    ...rows,
    'Ratios (issue 14 targets: per-turn time and bytes within 1.25x, peak RSS within 1.5x, resume within 1.5x):',
    ...ratioRows,
  ].join('\n');
}
