/**
 * Our durable loop (the real file store, fsync on) against LangGraph.js in its most durable
 * setting on files (langgraph.ts), on the bench's scripted conversation at T = 50, 200 and 800:
 * both warmed up, then interleaved repetition after repetition (each T in turn, the two taking
 * turns to go first), each of LangGraph's runs divided by ours of the same repetition.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ScriptedStep } from '../src/model/scripted-model.ts';
import { fsyncDir } from '../src/util/durable-file.ts';
import { measureLoop } from './contenders.ts';
import { LANGGRAPH_SETTING, type LangGraphContender, type LangGraphRun, LangGraphUnavailableError, startLangGraph } from './langgraph.ts';
import type { TargetCheck } from './targets.ts';
import { benchScript } from './workload.ts';

export const LANGGRAPH_TURNS = [50, 200, 800] as const;

/** Repetitions per T: LangGraph's 800-turn run stores every step's whole conversation (~1.8 GB of checkpoints, minutes). */
export const LANGGRAPH_REPS = {
  full: { 50: 7, 200: 5, 800: 3 },
  quick: { 50: 5, 200: 3, 800: 1 },
} as const satisfies Record<string, Record<(typeof LANGGRAPH_TURNS)[number], number>>;

/** The goal: LangGraph's durable mode on files at least this many times our time per turn, at every T. */
export const LANGGRAPH_GOAL = 5;

export interface LangGraphSample {
  ours: { ms: number; cpuMs: number };
  langGraph: LangGraphRun;
}

export interface LangGraphFigures {
  turns: number;
  reps: number;
  /** Medians of the runs' time per turn (wall, then CPU). */
  oursMsPerTurn: number;
  oursCpuMsPerTurn: number;
  langGraphMsPerTurn: number;
  langGraphCpuMsPerTurn: number;
  /** LangGraph ÷ ours: the median of each repetition's ratio (wall, then CPU). */
  langGraphOverOurs: number;
  langGraphOverOursCpu: number;
  /** What LangGraph's saver stored per turn, and its database's size at the end of a run. */
  checkpointsPerTurn: number;
  writesPerTurn: number;
  langGraphFileBytes: number;
}

export type LangGraphReport = { versions: LangGraphContender['versions']; figures: LangGraphFigures[] } | { skipped: string };

/** The two sides of one repetition; the bench's are measureLoop('durable') and the LangGraph contender. */
export interface LangGraphSides {
  ours(dir: string, script: readonly ScriptedStep[]): Promise<{ ms: number; cpuMs: number }>;
  langGraph(dir: string, script: readonly ScriptedStep[]): Promise<LangGraphRun>;
}

export function benchSides(contender: LangGraphContender): LangGraphSides {
  return {
    ours: async (dir, script) => {
      const { ms, cpuMs } = await measureLoop('durable', dir, script as ScriptedStep[]);
      return { ms, cpuMs };
    },
    langGraph: (dir, script) => contender.run(dir, script),
  };
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Warm-up (each side's code compiled before the clock), then the interleaved repetitions; every run's folder removed untimed. */
export async function measureLangGraph(
  root: string,
  sides: LangGraphSides,
  reps: Readonly<Record<number, number>>,
  log: (line: string) => void,
  turnsList: readonly number[] = LANGGRAPH_TURNS,
): Promise<LangGraphFigures[]> {
  let runs = 0;
  const inFolder = async <R>(run: (dir: string) => Promise<R>): Promise<R> => {
    const dir = path.join(root, `langgraph-versus-${runs++}`);
    try {
      return await run(dir);
    } finally {
      // Deleting a run's files leaves the file system work that the next fsync would pay for: done now, untimed.
      fs.rmSync(dir, { recursive: true, force: true });
      fsyncDir(root);
    }
  };
  const warm = benchScript(50);
  for (let i = 0; i < 3; i++) {
    await inFolder((dir) => sides.langGraph(dir, warm));
    await inFolder((dir) => sides.ours(dir, warm));
  }
  const samples = new Map<number, LangGraphSample[]>(turnsList.map((turns) => [turns, []]));
  const scripts = new Map(turnsList.map((turns) => [turns, benchScript(turns)]));
  const most = Math.max(...turnsList.map((turns) => reps[turns] ?? 0));
  for (let rep = 0; rep < most; rep++) {
    for (const turns of turnsList) {
      if (rep >= (reps[turns] ?? 0)) continue;
      const script = scripts.get(turns)!;
      const oursFirst = rep % 2 === 0;
      const first = oursFirst ? await inFolder((dir) => sides.ours(dir, script)) : await inFolder((dir) => sides.langGraph(dir, script));
      const second = oursFirst ? await inFolder((dir) => sides.langGraph(dir, script)) : await inFolder((dir) => sides.ours(dir, script));
      const sample = (oursFirst ? { ours: first, langGraph: second } : { ours: second, langGraph: first }) as LangGraphSample;
      samples.get(turns)!.push(sample);
      log(`  LangGraph T=${turns}: repetition ${rep + 1}/${reps[turns]}, ${(sample.langGraph.ms / sample.ours.ms).toFixed(1)}× ours`);
    }
  }
  return turnsList.map((turns) => langGraphFigures(turns, samples.get(turns)!));
}

export function langGraphFigures(turns: number, samples: readonly LangGraphSample[]): LangGraphFigures {
  const perTurn = (pick: (sample: LangGraphSample) => number) => median(samples.map(pick)) / turns;
  return {
    turns,
    reps: samples.length,
    oursMsPerTurn: perTurn((s) => s.ours.ms),
    oursCpuMsPerTurn: perTurn((s) => s.ours.cpuMs),
    langGraphMsPerTurn: perTurn((s) => s.langGraph.ms),
    langGraphCpuMsPerTurn: perTurn((s) => s.langGraph.cpuMs),
    langGraphOverOurs: median(samples.map((s) => s.langGraph.ms / s.ours.ms)),
    langGraphOverOursCpu: median(samples.map((s) => s.langGraph.cpuMs / s.ours.cpuMs)),
    checkpointsPerTurn: perTurn((s) => s.langGraph.checkpoints),
    writesPerTurn: perTurn((s) => s.langGraph.writes),
    langGraphFileBytes: median(samples.map((s) => s.langGraph.fileBytes)),
  };
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

export function langGraphLines(report: LangGraphReport): string[] {
  if ('skipped' in report) return [`LangGraph.js: skipped, ${report.skipped}`];
  const v = report.versions;
  return [
    `LangGraph.js against our durable loop, same scripted conversation (@langchain/langgraph ${v['@langchain/langgraph']}, @langchain/langgraph-checkpoint-sqlite ${v['@langchain/langgraph-checkpoint-sqlite']}, @langchain/core ${v['@langchain/core']}, better-sqlite3 ${v['better-sqlite3']}, SQLite ${v.sqlite}):`,
    `  setting: ${LANGGRAPH_SETTING}`,
    '      T  reps   ours ms/turn (cpu)   LangGraph ms/turn (cpu)   LangGraph ÷ ours (cpu)   LangGraph stored per turn, database at the end',
    ...report.figures.map((row) =>
      [
        String(row.turns).padStart(7),
        String(row.reps).padStart(5),
        `${row.oursMsPerTurn.toFixed(3)} (${row.oursCpuMsPerTurn.toFixed(3)})`.padStart(20),
        `${row.langGraphMsPerTurn.toFixed(2)} (${row.langGraphCpuMsPerTurn.toFixed(2)})`.padStart(25),
        `${row.langGraphOverOurs.toFixed(1)}× (${row.langGraphOverOursCpu.toFixed(1)}×)`.padStart(24),
        `   ${row.checkpointsPerTurn.toFixed(1)} checkpoints + ${row.writesPerTurn.toFixed(1)} write rows, ${mb(row.langGraphFileBytes)}`,
      ].join(' '),
    ),
  ];
}

export function langGraphTargets(report: LangGraphReport): TargetCheck[] {
  if ('skipped' in report) return [];
  return [
    {
      target: `LangGraph.js durable on files ÷ ours at least ${LANGGRAPH_GOAL}× per turn, at every T`,
      measured: report.figures.map((row) => `T=${row.turns}: ${row.langGraphOverOurs.toFixed(1)}×`).join(', '),
      met: report.figures.every((row) => row.langGraphOverOurs >= LANGGRAPH_GOAL),
    },
  ];
}

/** Installs and measures LangGraph (unless `enabled` is false: --no-langgraph); a skip says why. */
export async function langGraphSection(root: string, plan: keyof typeof LANGGRAPH_REPS, enabled: boolean, log: (line: string) => void): Promise<LangGraphReport> {
  if (!enabled) return { skipped: 'not asked for (--no-langgraph)' };
  let contender: LangGraphContender;
  try {
    contender = startLangGraph(log);
  } catch (error) {
    if (!(error instanceof LangGraphUnavailableError)) throw error;
    log(`LangGraph.js skipped: ${error.why}`);
    return { skipped: error.why };
  }
  log(`  LangGraph.js ${contender.versions['@langchain/langgraph']}: warm-up, then T = ${LANGGRAPH_TURNS.join(', ')} interleaved with ours`);
  return { versions: contender.versions, figures: await measureLangGraph(root, benchSides(contender), LANGGRAPH_REPS[plan], log) };
}
