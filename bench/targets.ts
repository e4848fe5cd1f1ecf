/** The issue's targets, each checked as a ratio of figures measured side by side in one run. */
import type { LoopFigures, LoopRatios, ResumeFigures } from './figures.ts';
import type { LongRunRatios } from './long-runs.ts';

export interface TargetCheck {
  target: string;
  measured: string;
  met: boolean;
}

const x = (ratio: number) => `${ratio.toFixed(2)}×`;
const kb = (bytes: number) => `${Math.round(bytes).toLocaleString('en-US')} B`;

export function checkTargets(
  loops: readonly LoopFigures[],
  ratios: readonly LoopRatios[],
  resume: readonly ResumeFigures[],
  contentBytesPerTurn: number,
): TargetCheck[] {
  const ours = loops.filter((row) => row.contender === 'durable').sort((a, b) => a.turns - b.turns);
  const first = ours[0]!;
  const last = ours[ours.length - 1]!;
  const checks: TargetCheck[] = [];

  const flat = last.bytesPerTurn / first.bytesPerTurn;
  checks.push({
    target: `bytes written per turn flat: T=${last.turns} within 1.25× of T=${first.turns}`,
    measured: `${kb(last.bytesPerTurn)} / ${kb(first.bytesPerTurn)} = ${x(flat)} (last turn alone: ${kb(last.lastTurnBytes ?? 0)} / ${kb(first.lastTurnBytes ?? 0)})`,
    met: flat <= 1.25,
  });
  const overContent = last.bytesPerTurn / contentBytesPerTurn;
  checks.push({
    target: `bytes written per turn at T=${last.turns} within 1.5× of the new content per turn`,
    measured: `${kb(last.bytesPerTurn)} / ${kb(contentBytesPerTurn)} = ${x(overContent)}`,
    met: overContent <= 1.5,
  });
  const worstFloor = Math.max(...ratios.map((r) => r.oursOverFloor));
  checks.push({
    target: 'persistence overhead per turn at most 1.25× the raw floor (the fsyncs the rule needs), at every T',
    measured:
      ratios.map((r) => `T=${r.turns}: ${x(r.oursOverFloor)}`).join(', ') +
      ` (the same loop on a bare append store: ${ratios.map((r) => (r.bareOverFloor === null ? '—' : x(r.bareOverFloor))).join(', ')}; ` +
      `diagnostic, not judged: ours over the paced floor, the raw floor with the in-memory loop's time busy between its appends: ${ratios.map((r) => (r.oursOverPacedFloor === null ? '—' : x(r.oursOverPacedFloor))).join(', ')})`,
    met: worstFloor <= 1.25,
  });
  const syncs = Math.max(...ours.map((row) => row.lastTurnFsyncs ?? Number.POSITIVE_INFINITY));
  checks.push({
    target: 'at most 2 fsyncs per one-call turn',
    measured: `${syncs} per turn (checkpoint A; the ledger entry with checkpoint B), plus 3 per run (create: file and directory; the final answer)`,
    met: syncs <= 2,
  });
  const memory = loops.filter((row) => row.contender === 'memory');
  const slowest = Math.max(...memory.map((row) => row.msPerTurn));
  checks.push({
    target: 'the loop in memory at most 0.2 ms per turn, at every T',
    measured:
      memory.map((row) => `T=${row.turns}: ${row.msPerTurn.toFixed(3)} ms`).join(', ') +
      ` (CPU time, which a busy machine's waits leave out: ${memory.map((row) => `${row.cpuMsPerTurn.toFixed(3)} ms`).join(', ')})`,
    met: slowest <= 0.2,
  });
  const naive = ratios.filter((r) => r.naiveOverOurs !== null).sort((a, b) => b.turns - a.turns)[0];
  if (naive) {
    checks.push({
      target: `at T=1000 at least 20× less overhead per turn than the naive baseline${naive.turns === 1000 ? '' : ` (measured at T=${naive.turns} only)`}`,
      measured: `naive ÷ ours = ${x(naive.naiveOverOurs!)}`,
      met: naive.turns === 1000 && naive.naiveOverOurs! >= 20,
    });
  }
  const largest = [...resume].sort((a, b) => b.turns - a.turns)[0];
  if (largest) {
    const label = `${largest.turns.toLocaleString('en-US')}-turn run`;
    checks.push({
      target: `resume of a ${label} within 2× of read + JSON.parse of the same data`,
      measured:
        `${largest.resumeMs.toFixed(0)} ms / ${largest.readParseMs.toFixed(0)} ms = ${x(largest.resumeOverReadParse)} ` +
        `(CPU time: ${largest.resumeCpuMs.toFixed(0)} ms / ${largest.readParseCpuMs.toFixed(0)} ms = ${x(largest.resumeOverReadParseCpu)})`,
      met: largest.resumeOverReadParse <= 2,
    });
    const growth = ((largest.resumePeakRssKb - largest.resumeBaseRssKb) * 1024) / largest.journalBytes;
    const whole = (largest.resumePeakRssKb * 1024) / largest.journalBytes;
    const readParseGrowth = ((largest.readParsePeakRssKb - largest.readParseBaseRssKb) * 1024) / largest.journalBytes;
    checks.push({
      target: `peak RSS on resume of a ${label} within 3× of the data size`,
      measured:
        `growth during the resume ${x(growth)} the journal (read + parse alone: ${x(readParseGrowth)}); ` +
        `whole process ${x(whole)}, of which the process before the resume (Node, tsx, the modules imported) is ${x((largest.resumeBaseRssKb * 1024) / largest.journalBytes)}`,
      met: growth <= 3,
    });
  }
  return checks;
}

/** Issue 14's long-run targets, each a ratio of runs measured side by side (long-runs.ts). */
export function checkLongRunTargets(ratios: readonly LongRunRatios[]): TargetCheck[] {
  const largest = [...ratios].sort((a, b) => b.to - a.to)[0];
  if (!largest) return [];
  const label = `T=${largest.to.toLocaleString('en-US')} with compaction`;
  const base = `T=${largest.from.toLocaleString('en-US')}`;
  return [
    {
      target: `per-turn time at ${label} within 1.25× of ${base}`,
      measured: `${x(largest.msPerTurn)} (CPU time, which a busy machine's waits leave out: ${x(largest.cpuMsPerTurn)})`,
      met: largest.msPerTurn <= 1.25,
    },
    { target: `bytes written per turn at ${label} within 1.25× of ${base}`, measured: x(largest.bytesPerTurn), met: largest.bytesPerTurn <= 1.25 },
    { target: `peak RSS of the running process at ${label} within 1.5× of ${base}`, measured: `${x(largest.peakRss)} (V8 heap in use after a GC at the end: ${x(largest.heapUsed)})`, met: largest.peakRss <= 1.5 },
    {
      target: `resume of a ${largest.to.toLocaleString('en-US')}-turn run within 1.5× of a ${largest.from.toLocaleString('en-US')}-turn one`,
      measured: `${x(largest.resumeMs)} (CPU ${x(largest.resumeCpuMs)}; peak RSS ${x(largest.resumePeakRss)})`,
      met: largest.resumeMs <= 1.5,
    },
  ];
}
