/**
 * bench:compare's figures: the samples of each benchmark on both trees reduced to medians and
 * the ratio this tree ÷ REF, and the table that prints them. Pure: no timing, no I/O.
 */
import type { Benchmark } from './args.ts';

/** One benchmark's samples on both trees, the repetitions paired by index (run one after the other). */
export interface Samples {
  benchmark: Benchmark;
  /** What is measured, as printed: "CPU per turn, memory store, T=50". */
  name: string;
  unit: string;
  ours: number[];
  ref: number[];
}

/** A benchmark REF could not run, and why. */
export interface Skipped {
  benchmark: Benchmark;
  name: string;
  skipped: string;
}

export interface ComparedRow {
  benchmark: Benchmark;
  name: string;
  unit: string;
  ours: number | null;
  ref: number | null;
  /** Median on this tree ÷ median on REF: below 1, this tree is faster (or does less). */
  ratio: number | null;
  /** The lowest and highest ratio of one repetition's pair: how much the machine moved under the figures. */
  pairRange: [number, number] | null;
  runs: number;
  skipped: string | null;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('the median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** a ÷ b, or null where it means nothing (b is 0). */
function ratioOf(a: number, b: number): number | null {
  return b === 0 ? (a === 0 ? 1 : null) : a / b;
}

export function comparedRow(entry: Samples | Skipped): ComparedRow {
  if ('skipped' in entry) return { benchmark: entry.benchmark, name: entry.name, unit: '', ours: null, ref: null, ratio: null, pairRange: null, runs: 0, skipped: entry.skipped };
  const ours = median(entry.ours);
  const ref = median(entry.ref);
  const pairs = entry.ours.slice(0, entry.ref.length).map((value, at) => ratioOf(value, entry.ref[at]!)).filter((r): r is number => r !== null);
  return {
    benchmark: entry.benchmark,
    name: entry.name,
    unit: entry.unit,
    ours,
    ref,
    ratio: ratioOf(ours, ref),
    pairRange: pairs.length > 0 ? [Math.min(...pairs), Math.max(...pairs)] : null,
    runs: Math.min(entry.ours.length, entry.ref.length),
    skipped: null,
  };
}

export function formatRatio(ratio: number | null): string {
  return ratio === null ? '–' : `${ratio.toFixed(2)}×`;
}

/** Three significant figures, at most three decimals: 0.128, 1.41, 31.2, 1,020. */
export function formatValue(value: number | null, unit: string): string {
  if (value === null) return '–';
  const abs = Math.abs(value);
  const decimals = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return `${value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals })} ${unit}`.trim();
}

export interface TableHeads {
  /** "this tree (5c8129c)" */
  ours: string;
  /** "REF 6d8b3bb" */
  ref: string;
}

/** The printed table: benchmark, this tree, REF, this ÷ REF, and the range of the pairs' ratios; a skipped benchmark says why. */
export function compareTable(rows: readonly ComparedRow[], heads: TableHeads): string {
  const header = ['benchmark', heads.ours, heads.ref, 'this ÷ REF', 'pairs (min–max)', 'runs'];
  const measured = rows.filter((row) => row.skipped === null);
  const body = measured.map((row) => [
    row.name,
    formatValue(row.ours, row.unit),
    formatValue(row.ref, row.unit),
    formatRatio(row.ratio),
    row.pairRange ? `${formatRatio(row.pairRange[0])}–${formatRatio(row.pairRange[1])}` : '–',
    String(row.runs),
  ]);
  const widths = header.map((head, column) => Math.max(head.length, ...body.map((cells) => cells[column]!.length), ...(column === 0 ? rows.map((row) => row.name.length) : [])));
  const line = (cells: string[]) => cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  const lines = new Map(measured.map((row, at) => [row, line(body[at]!)]));
  return [line(header), ...rows.map((row) => lines.get(row) ?? `${row.name.padEnd(widths[0]!)}  skipped: ${row.skipped}`)].join('\n');
}

/** One run of bench:compare, as its report shows it. */
export interface CompareRun {
  /** When it ran (ISO 8601). */
  date: string;
  plan: 'full' | 'quick';
  /** This tree's commit, "+changes" when its code had changes not committed. */
  ours: string;
  ref: { given: string; commit: string };
  node: string;
  cores: number;
  seconds: number;
  /** The 1-minute load average at the start and at the end. */
  load: { start: number; end: number };
  rows: ComparedRow[];
}

/** The report printed and written into the docs: what ran where and when, how to read it, the table. */
export function compareReport(run: CompareRun): string {
  const when = `${run.date.slice(0, 10)} ${run.date.slice(11, 16)} UTC`;
  return [
    `durable-agent bench:compare (${run.plan}): this tree (${run.ours}) against REF ${run.ref.given} (${run.ref.commit}); ${when}; ` +
      `node ${run.node}, ${run.cores} cores; ${run.seconds.toFixed(0)} s; load average ${run.load.start.toFixed(1)} at the start, ${run.load.end.toFixed(1)} at the end`,
    'Medians; the trees take turns every repetition (the order swapped each time); in-process runs after an untimed warm-up of each tree, resumes each in a fresh process,',
    'fleets each on a fresh database of their own, workers warmed up first.',
    'this ÷ REF below 1: this tree takes less (but records per CPU second: above 1, this tree does more with the CPU). pairs: the ratio within one repetition, lowest and highest.',
    '',
    compareTable(run.rows, { ours: `this tree (${run.ours})`, ref: `REF ${run.ref.commit}` }),
  ].join('\n');
}
