/**
 * Two variants of one workload measured in pairs, for a ratio a shared machine does not drown:
 * each round runs both back to back (the order alternating, ABBA…, so a drift in the machine's
 * load favours neither), and the ratio is taken within each round before any summary. The median
 * of those paired ratios and their interquartile range say how far one variant's cost is from the
 * other's and how much that moved; a ratio of two medians taken apart mixes rounds under
 * different loads. CPU time (this process's) is paired the same way: it moves less with the
 * load than the wall clock, though it leaves out the work of another process (a database server).
 */
import { median } from './stats.ts';

/** One run of a variant: its cost per unit of work (a turn), in ms of wall clock and of this process's CPU. */
export interface RunCost {
  wallMs: number;
  cpuMs: number;
}

/** Runs `body` and divides its wall-clock and CPU time by `units`. */
export async function measured(units: number, body: () => Promise<void>): Promise<RunCost> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await body();
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { wallMs: wallMs / units, cpuMs: (used.user + used.system) / 1000 / units };
}

export interface PairedRounds {
  base: RunCost[];
  variant: RunCost[];
}

/** `rounds` pairs, the order alternating; `run(variant, round)` runs one. */
export async function pairedRounds(rounds: number, run: (variant: boolean, round: number) => Promise<RunCost>): Promise<PairedRounds> {
  const base: RunCost[] = [];
  const variant: RunCost[] = [];
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      base.push(await run(false, round));
      variant.push(await run(true, round));
    } else {
      variant.push(await run(true, round));
      base.push(await run(false, round));
    }
  }
  return { base, variant };
}

/** The value below which a share `q` of `values` lies (linear between neighbours). */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.min(low + 1, sorted.length - 1);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (at - low);
}

export interface RatioSummary {
  median: number;
  /** The interquartile range of the paired ratios: how much one pair's ratio moves. */
  q1: number;
  q3: number;
  /**
   * Where the median itself lies, about 95% sure (the order statistics n/2 ± 0.98√n, which
   * assume nothing of the ratios' distribution): how far the printed median can be trusted.
   */
  low: number;
  high: number;
}

export function pairedRatios(base: readonly number[], variant: readonly number[]): RatioSummary {
  const ratios = variant.map((value, index) => value / base[index]!).sort((a, b) => a - b);
  const n = ratios.length;
  const spread = 0.98 * Math.sqrt(n);
  const low = ratios[Math.max(0, Math.floor(n / 2 - spread))]!;
  const high = ratios[Math.min(n - 1, Math.ceil(n / 2 + spread) - 1)]!;
  return { median: median(ratios), q1: quantile(ratios, 0.25), q3: quantile(ratios, 0.75), low, high };
}

/** The lines a benchmark prints: medians per unit side by side, and the paired ratios with their spread. */
export function pairedReport(measuredPairs: PairedRounds, names: { base: string; variant: string; unit: string }): string[] {
  const { base, variant } = measuredPairs;
  const line = (what: string, pick: (cost: RunCost) => number) => {
    const ratio = pairedRatios(base.map(pick), variant.map(pick));
    return (
      `  ${what.padEnd(5)} ${names.base} ${median(base.map(pick)).toFixed(3)} ms, ${names.variant} ${median(variant.map(pick)).toFixed(3)} ms per ${names.unit};` +
      ` paired ratio: median ${ratio.median.toFixed(3)}x (95% ${ratio.low.toFixed(3)}x–${ratio.high.toFixed(3)}x), interquartile ${ratio.q1.toFixed(3)}x–${ratio.q3.toFixed(3)}x`
    );
  };
  return [line('wall', (cost) => cost.wallMs), line('cpu', (cost) => cost.cpuMs)];
}
