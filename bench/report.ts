/** Prints the benchmark's figures as plain-text tables. */
import type { LoopFigures, LoopRatios, ResumeFigures } from './figures.ts';
import type { TargetCheck } from './targets.ts';
import type { LongRunFigures, LongRunRatios } from './long-runs.ts';

type Cell = string | number;

/** Columns are right-aligned except those named in `left`. */
export function table(headers: string[], rows: Cell[][], left: ReadonlySet<number> = new Set()): string {
  const text = [headers, ...rows.map((row) => row.map(String))];
  const widths = headers.map((_, c) => Math.max(...text.map((row) => row[c]!.length)));
  return text
    .map((row) => row.map((cell, c) => (left.has(c) ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ').trimEnd())
    .join('\n');
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(3));
const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;
const dash = '—';

export function loopTable(rows: readonly LoopFigures[]): string {
  return table(
    ['T', 'contender', 'runs', 'ms/turn', 'overhead ms/turn', 'in fsync ms/turn', 'bytes/turn', 'bytes, turn T', 'fsyncs/turn', 'fsyncs, turn T'],
    rows.map((row) => [
      int(row.turns),
      row.label,
      row.runs,
      ms(row.msPerTurn),
      row.overheadMsPerTurn === null ? dash : ms(row.overheadMsPerTurn),
      row.fsyncsPerTurn === 0 ? dash : ms(row.fsyncMsPerTurn),
      int(row.bytesPerTurn),
      row.lastTurnBytes === null ? dash : int(row.lastTurnBytes),
      row.fsyncsPerTurn.toFixed(2),
      row.lastTurnFsyncs === null ? dash : row.lastTurnFsyncs,
    ]),
    new Set([1]),
  );
}

export function ratioTable(ratios: readonly LoopRatios[]): string {
  return table(
    ['T', 'our overhead ÷ raw floor', 'naive overhead ÷ ours', 'bare append store overhead ÷ raw floor', 'diagnostic: paced floor ÷ raw floor', 'our overhead ÷ paced floor'],
    ratios.map((r) => [
      int(r.turns),
      `${r.oursOverFloor.toFixed(2)}×`,
      r.naiveOverOurs === null ? dash : `${r.naiveOverOurs.toFixed(1)}×`,
      r.bareOverFloor === null ? dash : `${r.bareOverFloor.toFixed(2)}×`,
      r.pacedOverFloor === null ? dash : `${r.pacedOverFloor.toFixed(2)}×`,
      r.oursOverPacedFloor === null ? dash : `${r.oursOverPacedFloor.toFixed(2)}×`,
    ]),
  );
}

export function resumeTable(rows: readonly ResumeFigures[]): string {
  const growth = (peak: number, base: number, bytes: number) => `+${mb(peak - base)} (${(((peak - base) * 1024) / bytes).toFixed(2)}×)`;
  return table(
    ['T', 'journal', 'runs', 'resume ms', 'read+parse ms', 'ratio', 'CPU ms: resume', 'read+parse', 'ratio', 'resume peak RSS', 'growth (÷ journal)', 'read+parse peak RSS', 'growth (÷ journal)'],
    rows.map((row) => [
      int(row.turns),
      `${(row.journalBytes / 1048576).toFixed(1)} MB`,
      row.runs,
      ms(row.resumeMs),
      ms(row.readParseMs),
      `${row.resumeOverReadParse.toFixed(2)}×`,
      ms(row.resumeCpuMs),
      ms(row.readParseCpuMs),
      `${row.resumeOverReadParseCpu.toFixed(2)}×`,
      mb(row.resumePeakRssKb),
      growth(row.resumePeakRssKb, row.resumeBaseRssKb, row.journalBytes),
      mb(row.readParsePeakRssKb),
      growth(row.readParsePeakRssKb, row.readParseBaseRssKb, row.journalBytes),
    ]),
  );
}

export function targetLines(checks: readonly TargetCheck[]): string {
  return checks.map((check) => `${check.met ? '[met]   ' : '[missed]'} ${check.target}: ${check.measured}`).join('\n');
}

/** Long runs with compaction through the real runtime (long-runs.ts). */
export function longRunTable(rows: readonly LongRunFigures[]): string {
  const cpu = (wall: number, cpuMs: number) => `${ms(wall)} (${ms(cpuMs)})`;
  return table(
    ['T', 'written in', 'ms/turn (CPU)', 'last 1,000 turns', 'bytes/turn', 'fsyncs/turn', 'compactions', 'snapshots', 'peak RSS', 'heap after GC', 'resume ms (CPU)', 'to first write', 'resume peak RSS'],
    rows.map((row) => [
      int(row.turns),
      row.writeSeconds.map((s) => `${s.toFixed(0)} s`).join(' + '),
      cpu(row.msPerTurn, row.cpuMsPerTurn),
      cpu(row.windowMsPerTurn, row.windowCpuMsPerTurn),
      int(row.bytesPerTurn),
      row.syncsPerTurn.toFixed(2),
      row.writes.map((w) => int(w.compactions)).join(' / '),
      row.writes.map((w) => int(w.snapshots)).join(' / '),
      `${mb(row.peakRssKb)} (base ${mb(row.baseRssKb)})`,
      `${(row.heapUsedBytes / 1048576).toFixed(1)} MB`,
      cpu(row.resumeMs, row.resumeCpuMs),
      cpu(row.resumeFirstWriteMs, row.resumeFirstWriteCpuMs),
      mb(row.resumePeakRssKb),
    ]),
  );
}

export function longRunRatioLines(ratios: readonly LongRunRatios[]): string[] {
  const x = (n: number) => `${n.toFixed(2)}×`;
  return ratios.map(
    (r) =>
      `  T=${int(r.to)} ÷ T=${int(r.from)}: per-turn time ${x(r.msPerTurn)} (CPU ${x(r.cpuMsPerTurn)}; last 1,000 turns ${x(r.windowMsPerTurn)}, CPU ${x(r.windowCpuMsPerTurn)}), ` +
      `bytes per turn ${x(r.bytesPerTurn)}, peak RSS ${x(r.peakRss)} (heap after GC ${x(r.heapUsed)}), resume ${x(r.resumeMs)} (CPU ${x(r.resumeCpuMs)}, peak RSS ${x(r.resumePeakRss)})`,
  );
}
