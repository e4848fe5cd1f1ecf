/**
 * The figures the benchmark reports, derived from the raw measurements: medians, per-turn
 * overheads against the in-memory loop of the same repetitions, and same-run ratios.
 */
import { CONTENDER_LABELS, type Contender, type RunMeasure } from './contenders.ts';
import type { ChildMeasure } from './resume-child.ts';
import { median } from './stats.ts';

export interface LoopFigures {
  turns: number;
  contender: Contender;
  label: string;
  runs: number;
  /** Median over the runs of (run time / turns). */
  msPerTurn: number;
  /** Median over the runs of (the process's CPU time, user + system, / turns): what a busy machine's waits leave out. */
  cpuMsPerTurn: number;
  /**
   * What persistence adds per turn: the median over repetitions of (this run − the in-memory
   * run of the same repetition). The raw floor has no loop: its overhead is its own time; the
   * paced floor's is its own time less the time it spent busy.
   */
  overheadMsPerTurn: number | null;
  /** All bytes the run handed to write calls, divided by the turns. */
  bytesPerTurn: number;
  /** Bytes written by the last turn alone, from checkpoint B of turn T-1 to checkpoint B of turn T. */
  lastTurnBytes: number | null;
  fsyncsPerTurn: number;
  lastTurnFsyncs: number | null;
  /** Median over the runs of the time spent inside fsync/fdatasync calls, per turn. */
  fsyncMsPerTurn: number;
}

export interface LoopRatios {
  turns: number;
  /** Our durable loop's overhead per turn over the raw floor's time per turn (same fsyncs, same bytes). */
  oursOverFloor: number;
  /** The naive baseline's overhead per turn over ours. */
  naiveOverOurs: number | null;
  /** The same loop on the bare append store (diagnostic), over the raw floor. */
  bareOverFloor: number | null;
  /**
   * Diagnostics of the paced floor (the raw floor with the in-memory loop's time busy between
   * its appends): its overhead over the raw floor's (what the disk charges more when a loop
   * computes between fsyncs), and our overhead over it (what is left: our own CPU, our commit mark).
   */
  pacedOverFloor: number | null;
  oursOverPacedFloor: number | null;
}

export interface ResumeFigures {
  turns: number;
  journalBytes: number;
  runs: number;
  resumeMs: number;
  readParseMs: number;
  resumeOverReadParse: number;
  /** The same in CPU time (user + system) of the child processes. */
  resumeCpuMs: number;
  readParseCpuMs: number;
  resumeOverReadParseCpu: number;
  /** Peak RSS of the resume process (median over runs), and before the measured part (all imports done). */
  resumePeakRssKb: number;
  resumeBaseRssKb: number;
  readParsePeakRssKb: number;
  readParseBaseRssKb: number;
  /** What the resume did before its first effect. */
  resumeDetail: string;
}

export type LoopSamples = Map<Contender, RunMeasure[]>;

export function loopFigures(turns: number, samples: LoopSamples): LoopFigures[] {
  const memory = samples.get('memory') ?? [];
  const rows: LoopFigures[] = [];
  for (const [contender, runs] of samples) {
    if (runs.length === 0) continue;
    const perTurn = runs.map((run) => run.ms / turns);
    const paired = runs.flatMap((run, i) => (memory[i] ? [run.ms / turns - memory[i].ms / turns] : []));
    const last = runs[0]!;
    rows.push({
      turns,
      contender,
      label: CONTENDER_LABELS[contender],
      runs: runs.length,
      msPerTurn: median(perTurn),
      cpuMsPerTurn: median(runs.map((run) => run.cpuMs / turns)),
      overheadMsPerTurn: contender === 'memory' ? null : contender === 'floor' ? median(perTurn) : contender === 'paced' ? median(runs.map(pacedOverhead).map((ms) => ms / turns)) : median(paired),
      bytesPerTurn: last.io.bytes / turns,
      lastTurnBytes: last.lastTurn?.bytes ?? null,
      fsyncsPerTurn: last.io.syncs / turns,
      lastTurnFsyncs: last.lastTurn?.syncs ?? null,
      fsyncMsPerTurn: median(runs.map((run) => run.io.syncMs / turns)),
    });
  }
  return rows;
}

/**
 * Ratios taken repetition by repetition (the contenders of one repetition ran back to back, so a
 * slow or fast spell of a shared machine falls on both sides of the ratio), then the median.
 */
export function loopRatios(turns: number, samples: LoopSamples): LoopRatios {
  const memory = samples.get('memory') ?? [];
  const overheads = (contender: Contender) =>
    (samples.get(contender) ?? []).flatMap((run, i) => (memory[i] ? [(run.ms - memory[i].ms) / turns] : []));
  const ours = overheads('durable');
  const floor = (samples.get('floor') ?? []).map((run) => run.ms / turns);
  const naive = overheads('naive');
  const bare = overheads('bare');
  const paced = (samples.get('paced') ?? []).map((run) => pacedOverhead(run) / turns);
  const pairs = (over: number[], under: number[]) => median(over.flatMap((value, i) => (under[i] === undefined ? [] : [value / under[i]])));
  return {
    turns,
    oursOverFloor: pairs(ours, floor),
    naiveOverOurs: naive.length ? pairs(naive, ours) : null,
    bareOverFloor: bare.length ? pairs(bare, floor) : null,
    pacedOverFloor: paced.length ? pairs(paced, floor) : null,
    oursOverPacedFloor: paced.length ? pairs(ours, paced) : null,
  };
}

/** The paced floor's own time: its run less the time it spent busy between appends. */
function pacedOverhead(run: RunMeasure): number {
  return run.ms - (run.busyMs ?? 0);
}

export function resumeFigures(turns: number, journalBytes: number, resume: ChildMeasure[], readParse: ChildMeasure[]): ResumeFigures {
  const resumeMs = median(resume.map((m) => m.ms));
  const readParseMs = median(readParse.map((m) => m.ms));
  const resumeCpuMs = median(resume.map((m) => m.cpuMs));
  const readParseCpuMs = median(readParse.map((m) => m.cpuMs));
  return {
    turns,
    journalBytes,
    runs: resume.length,
    resumeMs,
    readParseMs,
    resumeOverReadParse: resumeMs / readParseMs,
    resumeCpuMs,
    readParseCpuMs,
    resumeOverReadParseCpu: resumeCpuMs / readParseCpuMs,
    resumePeakRssKb: median(resume.map((m) => m.peakRssKb)),
    resumeBaseRssKb: median(resume.map((m) => m.baseRssKb)),
    readParsePeakRssKb: median(readParse.map((m) => m.peakRssKb)),
    readParseBaseRssKb: median(readParse.map((m) => m.baseRssKb)),
    resumeDetail: resume[0]?.detail ?? '',
  };
}
