/**
 * npm run bench [-- --quick] [-- --long] [-- --dir DIR] [-- --no-langgraph]
 *
 * Runs, side by side in one process, the same scripted T-turn agent run (~2 KB tool results)
 * on our durable loop (real file store, fsync on), on the same loop in memory, on the naive
 * baseline store (whole checkpoint and whole ledger rewritten with fsync), and the raw floor
 * (the same appends and fsyncs, no logic), and what the number of write calls a turn costs
 * (write-shapes.ts); then our durable loop against LangGraph.js on files
 * (T = 50, 200, 800; installed outside the repository on first use, --no-langgraph leaves it
 * out: langgraph-bench.ts); then measures resume in fresh processes, and long
 * runs with and without snapshot records at T = 1,000 and 10,000 (--long: and 100,000). Prints one
 * report (with runs by id: attaching to one run in a folder of 10,000 against one of 10) and
 * writes its figures to bench/results/latest.json (--quick: latest-quick.json).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { foldJournal } from '../src/store/journal/fold-journal.ts';
import { fsyncDir } from '../src/util/durable-file.ts';
import { MemoryStore } from '../src/store/memory-store.ts';
import { startRun } from '../src/runtime/run-api.ts';
import { type Contender, measureFloor, measureLoop, type RunMeasure } from './contenders.ts';
import { type LoopFigures, loopFigures, type LoopRatios, loopRatios, type LoopSamples, type ResumeFigures, resumeFigures } from './figures.ts';
import { fsyncGapLines, measureFsyncGaps } from './fsync-gap.ts';
import { installIoCounter } from './io-counter.ts';
import { langGraphLines, langGraphSection, langGraphTargets } from './langgraph-bench.ts';
import { type FloorPlan, paceOf } from './raw-floor.ts';
import { loopTable, ratioTable, resumeTable, targetLines } from './report.ts';
import { digestOf, measureInChild } from './resume-measure.ts';
import type { ChildMeasure } from './resume-child.ts';
import { resumeStoreDir, writeKilledRun } from './resume-journal.ts';
import { measureSnapshots, snapshotRatios, snapshotReport } from './snapshot-bench.ts';
import { checkLongRunTargets, checkTargets } from './targets.ts';
import { longRunRatios, measureLongRuns } from './long-runs.ts';
import { longRunRatioLines, longRunTable } from './report.ts';
import { measureParallelStream, parallelStreamLines, parallelTargets } from './parallel-stream.ts';
import { attachLines, attachTargets, measureAttachById } from './attach-by-id.ts';
import { benchRunOptions, benchScript, contentBytesPerTurn, TOOL_RESULT_BYTES } from './workload.ts';
import { measureWriteShapes, writeShapeLines } from './write-shapes.ts';

interface Plan {
  name: 'full' | 'quick';
  turns: number[];
  /** Repetitions per T; the naive baseline gets fewer at large T (one 1,000-turn run takes about a minute). */
  reps: Record<number, number>;
  naiveReps: Record<number, number>;
  resumeTurns: number[];
  resumeReps: number;
  /** Long runs with a bounded context, with and without snapshot records (snapshot-bench.ts). */
  snapshotTurns: number[];
}

const FULL: Plan = {
  name: 'full',
  turns: [50, 200, 1000],
  reps: { 50: 15, 200: 11, 1000: 5 },
  naiveReps: { 50: 9, 200: 5, 1000: 3 },
  resumeTurns: [1000, 10000],
  resumeReps: 5,
  snapshotTurns: [1000, 10000],
};

const QUICK: Plan = {
  name: 'quick',
  turns: [50, 200],
  reps: { 50: 7, 200: 5 },
  naiveReps: { 50: 5, 200: 3 },
  resumeTurns: [1000],
  resumeReps: 3,
  snapshotTurns: [1000, 10000],
};

/** A quick run writes beside the committed figures of the full run, not over them. */
const RESULTS = { full: 'latest.json', quick: 'latest-quick.json' } as const;

function argValue(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

/**
 * Clears the young generation between contenders, so that none is timed collecting another's
 * garbage. Only the young generation: a full gc() (what --expose-gc's gc() does without an
 * argument) also throws away V8's compiled code, and every loop contender then ran its timed
 * run half cold (twice the in-memory loop's time per turn, measured side by side), which a
 * long-lived process never does. Old-generation garbage is left to whichever contender
 * collects next; the contenders take turns.
 */
function collectGarbage(): void {
  (globalThis as { gc?: (options: { type: 'minor' }) => void }).gc?.({ type: 'minor' });
}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

const CLOSE_CONTENDERS = ['durable', 'bare', 'floor', 'paced'] as const;

async function measureTurns(root: string, turns: number, plan: Plan): Promise<LoopSamples> {
  const script = benchScript(turns);
  const samples: LoopSamples = new Map<Contender, RunMeasure[]>([['memory', []], ['durable', []], ['bare', []], ['floor', []], ['paced', []], ['naive', []]]);
  let floorPlan: FloorPlan | null = null;
  const reps = plan.reps[turns]!;
  for (let rep = 0; rep < reps; rep++) {
    // One repetition runs every contender back to back, so slow and fast spells of a shared
    // machine fall on all of them alike. The four compared most closely take turns in the
    // middle (none always follows another; the first repetition gives the floors their plan;
    // the in-memory loop, always first, gives the paced floor its pace); the naive baseline,
    // the heaviest on the disk, goes last.
    const shift = rep % CLOSE_CONTENDERS.length;
    const turn = [...CLOSE_CONTENDERS.slice(shift), ...CLOSE_CONTENDERS.slice(0, shift)];
    for (const contender of ['memory', ...turn, 'naive'] as const) {
      if (contender === 'naive' && rep >= plan.naiveReps[turns]!) continue;
      const dir = path.join(root, `${contender}-${turns}-${rep}`);
      collectGarbage();
      const measure: RunMeasure =
        contender === 'floor'
          ? measureFloor(dir, floorPlan!)
          : contender === 'paced'
            ? measureFloor(dir, floorPlan!, paceOf(samples.get('memory')![rep]!.ms, floorPlan!))
            : await measureLoop(contender, dir, script);
      floorPlan ??= measure.floorPlan ?? null;
      samples.get(contender)!.push(measure);
      // Deleting files leaves the file system work (freeing blocks, trimming them when mounted with
      // discard) that the next fsync would pay for: the next contender's. It is done now, untimed.
      fs.rmSync(dir, { recursive: true, force: true });
      fsyncDir(root);
    }
    log(`  T=${turns}: repetition ${rep + 1}/${reps} done`);
  }
  return samples;
}

/** Turns run untimed before the first measurement, per loop contender. */
const WARM_UP_TURNS = { memory: 5000, durable: 1000, bare: 500 } as const;

function warmUpWords(): string {
  return Object.entries(WARM_UP_TURNS)
    .map(([contender, turns]) => `${turns.toLocaleString('en-US')} turns ${contender}`)
    .join(', ');
}

async function warmUp(root: string, say: (line: string) => void): Promise<void> {
  const script = benchScript(500);
  for (const [contender, turns] of Object.entries(WARM_UP_TURNS) as Array<[keyof typeof WARM_UP_TURNS, number]>) {
    for (let done = 0; done < turns; done += 500) {
      const dir = path.join(root, `warm-${contender}-${done}`);
      await measureLoop(contender, dir, script);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  fsyncDir(root);
  say(`  warm-up done: ${warmUpWords()}`);
}

/** The conversation's new bytes per turn, from an uninterrupted in-memory run. */
async function contentPerTurn(turns: number): Promise<number> {
  const store = new MemoryStore('content');
  await startRun(benchRunOptions(store, benchScript(turns)));
  return contentBytesPerTurn(foldJournal(store.location, await store.load()).context.messages, turns);
}

async function measureResume(root: string, turns: number, reps: number): Promise<ResumeFigures> {
  const dir = path.join(root, `resume-${turns}`);
  const journal = await writeKilledRun(dir, turns);
  const before = digestOf(journal);
  const resume: ChildMeasure[] = [];
  const readParse: ChildMeasure[] = [];
  for (let rep = 0; rep < reps; rep++) {
    // Alternate which goes first, so that neither always finds the file freshly cached.
    const order = rep % 2 ? (['read-parse', 'resume'] as const) : (['resume', 'read-parse'] as const);
    for (const mode of order) {
      const measure = measureInChild(mode, mode === 'resume' ? resumeStoreDir(dir) : journal);
      (mode === 'resume' ? resume : readParse).push(measure);
    }
  }
  if (digestOf(journal) !== before) throw new Error(`the resume measurements changed ${journal}`);
  const figures = resumeFigures(turns, fs.statSync(journal).size, resume, readParse);
  fs.rmSync(dir, { recursive: true, force: true });
  return figures;
}

async function main(): Promise<void> {
  const chosen = process.argv.includes('--quick') ? QUICK : FULL;
  // 100,000 turns take minutes to write (twice: with and without snapshots): only when asked.
  const plan = process.argv.includes('--long') ? { ...chosen, snapshotTurns: [...chosen.snapshotTurns, 100_000] } : chosen;
  const root = fs.mkdtempSync(path.join(argValue('--dir') ?? os.tmpdir(), 'durable-agent-bench-'));
  installIoCounter();
  const started = Date.now();
  // The machine may be shared: its load is part of what the figures mean.
  const loadAtStart = os.loadavg()[0]!;
  try {
    log(`bench (${plan.name}) working in ${root}`);
    // Warm-up: every code path once, then the loop long enough for V8 to have compiled its hot
    // code (a fresh process runs its first few thousand turns 2-5× slower while it does), so
    // that what is timed is the loop a long-lived process runs, not the compiler.
    await measureTurns(root, 20, { ...plan, reps: { 20: 1 }, naiveReps: { 20: 1 } });
    await warmUp(root, log);

    const loops: LoopFigures[] = [];
    const ratios: LoopRatios[] = [];
    for (const turns of plan.turns) {
      const samples = await measureTurns(root, turns, plan);
      loops.push(...loopFigures(turns, samples));
      ratios.push(loopRatios(turns, samples));
    }
    // Right after the floors, on the same disk: what an fdatasync costs by the time since the last one.
    const fsyncGaps = measureFsyncGaps(path.join(root, 'fsync-gaps'));
    const writeShapes = await measureWriteShapes(root, { reps: plan.name === 'full' ? 15 : 7 });
    const langGraph = await langGraphSection(root, plan.name, !process.argv.includes('--no-langgraph'), log);
    const largest = Math.max(...plan.turns);
    const content = await contentPerTurn(largest);
    const resume: ResumeFigures[] = [];
    for (const turns of plan.resumeTurns) {
      log(`  resume: writing a ${turns}-turn journal (fsync off for this input only), then ${plan.resumeReps} runs`);
      resume.push(await measureResume(root, turns, plan.resumeReps));
    }
    const snapshots = measureSnapshots(root, plan.snapshotTurns, plan.resumeReps, log);
    const snapshotRatioList = snapshotRatios(snapshots);
    const targets = checkTargets(loops, ratios, resume, content);
    targets.push(...langGraphTargets(langGraph));
    const parallelStream = await measureParallelStream(root, 7, log);
    targets.push(...parallelTargets(parallelStream));
    // Long runs with compaction through the real runtime: 1,000 and 10,000 turns; --long adds 100,000 (~10-25 min of fsyncs).
    const longRuns = measureLongRuns(root, process.argv.includes('--long') ? [1000, 10_000, 100_000] : [1000, 10_000], log);
    const longRatios = longRunRatios(longRuns);
    targets.push(...checkLongRunTargets(longRatios));
    const attach = await measureAttachById(root, [10, 10_000], plan.name === 'full' ? 31 : 11, log);
    targets.push(...attachTargets(attach));

    const loadAtEnd = os.loadavg()[0]!;
    const header =
      `durable-agent bench (${plan.name}): scripted model, one ~${TOOL_RESULT_BYTES / 1024} KB tool result per turn; ` +
      `node ${process.version}, ${os.cpus().length} cores, ${os.platform()}; ${((Date.now() - started) / 1000).toFixed(0)} s; ` +
      `load average ${loadAtStart.toFixed(1)} at the start, ${loadAtEnd.toFixed(1)} at the end`;
    const report = [
      header,
      '',
      `Per turn (time per turn = the whole run ÷ T, median of the runs; overhead = minus the in-memory loop of the same repetition; after an untimed warm-up of ${warmUpWords()}):`,
      loopTable(loops),
      '',
      `Same-run ratios, each the median of the ratios of one repetition (new conversation content: ${Math.round(content).toLocaleString('en-US')} bytes per turn):`,
      ratioTable(ratios),
      '',
      'The disk alone (a diagnostic): one fdatasync of a 1.5 KB append, median (p10-p90) and ÷ back to back, by the time since the last fdatasync:',
      ...fsyncGapLines(fsyncGaps),
      '',
      ...writeShapeLines(writeShapes),
      '',
      ...langGraphLines(langGraph),
      '',
      'Resume (load + fold + reconcile: resumeRun up to its first effect; a fresh process per run, median):',
      resumeTable(resume),
      `  resume did: ${resume.map((r) => `T=${r.turns}: ${r.resumeDetail}`).join('; ')}`,
      '',
      snapshotReport(snapshots, snapshotRatioList),
      '',
      'Long runs with client compaction through the real runtime (a process per run, real fsyncs; killed at turn T, resumed in fresh processes; ms with CPU ms beside):',
      longRunTable(longRuns),
      ...longRunRatioLines(longRatios),
      '',
      'Targets:',
      targetLines(targets),
      '',
      'Parallel calls and streamed replies:',
      ...parallelStreamLines(parallelStream),
      '',
      'Runs by id (startRun under the id of a finished run: its stored result, nothing run; median, the folders taking turns):',
      ...attachLines(attach),
    ].join('\n');
    console.log(report);

    const results = {
      generatedAt: new Date().toISOString(),
      plan,
      machine: { node: process.version, cpus: os.cpus().length, platform: os.platform(), release: os.release(), loadAtStart, loadAtEnd },
      contentBytesPerTurn: content,
      loops,
      ratios,
      fsyncGaps,
      writeShapes,
      langGraph,
      resume,
      snapshots,
      snapshotRatios: snapshotRatioList,
      targets,
      parallelStream,
      longRuns,
      longRunRatios: longRatios,
      attach,
    };
    const file = fileURLToPath(new URL(`./results/${RESULTS[plan.name]}`, import.meta.url));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(results, null, 2)}\n`);
    fs.renameSync(`${file}.tmp`, file);
    log(`figures written to ${path.relative(process.cwd(), file)}`);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

await main();
