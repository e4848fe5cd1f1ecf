/**
 * One long run, or its resume, in a process of its own (so that its peak RSS is that run's):
 *
 *   long-run-child.ts write <dir> <turns> <contextWindow>
 *   long-run-child.ts resume <dir> <turns> <contextWindow>
 *
 * `write` runs the real runtime (startRun, the real FileStore with its fsyncs, client compaction
 * with the given context window, the bench workload's ~2 KB tool results) and is killed right
 * after the ledger entry of its last turn (crash point after-effect-write:T, the process exits
 * 137 as a kill would). `resume` takes that run up in a fresh process (resumeRun: load from the
 * last snapshot, fold, reconcile the open turn from the ledger) and finishes it.
 *
 * Prints one JSON line (LongWrite or LongResume).
 */
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ModelReply } from '../machines/agent-loop.types.ts';
import { endTurnReply, scriptedModel, type ScriptedStep, toolUseReply } from '../src/model/scripted-model.ts';
import { SIMULATED_CRASH_EXIT_CODE, SimulatedCrash } from '../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../src/runtime/run-api.ts';
import type { RunEvent } from '../src/core/run-events.ts';
import { FileStore } from '../src/store/file-store.ts';
import { installIoCounter, type IoCounts, ioNow, ioSince, withoutSyncs } from './io-counter.ts';
import { resumeStoreDir } from './resume-journal.ts';
import { fetchPage } from './workload.ts';

/** Per-turn figures are also taken over the last this many turns of a run (a growing cost shows there first). */
export const LONG_WINDOW = 1000;

interface Span {
  ms: number;
  cpuMs: number;
  io: IoCounts;
}

export interface LongWrite {
  turns: number;
  contextWindow: number;
  /** The whole run, from startRun to the kill after turn T's ledger entry. */
  whole: Span;
  /** The last LONG_WINDOW turns alone (checkpoint B of turn T-LONG_WINDOW-1 to the kill). */
  window: Span & { turns: number };
  compactions: number;
  snapshots: number;
  /** process.resourceUsage().maxRSS at the kill, KB: the peak of the whole writing process. */
  peakRssKb: number;
  /** The same after a warm-up run of WARM_UP_TURNS turns, before the measured run: Node, tsx, the modules, compiled code. */
  baseRssKb: number;
  /** V8 heap in use after a full GC at the kill: what the process still holds, without the garbage. */
  heapUsedBytes: number;
  journalBytes: number;
  /** Messages in the live context at the kill. */
  liveMessages: number;
}

export interface LongResume {
  turns: number;
  /** resumeRun from its call to the finished run (load, fold, reconcile, close turn T, the final reply). */
  ms: number;
  cpuMs: number;
  /** Up to the first record the resumed process wrote: load, fold and reconcile. */
  firstWriteMs: number;
  firstWriteCpuMs: number;
  peakRssKb: number;
  baseRssKb: number;
  /** Records the load read (from the last snapshot on). */
  detail: string;
}

/**
 * The model's replies, made when asked for rather than held: a 100,000-turn script held as an
 * array would itself be tens of megabytes of the writer's peak RSS, which is the bench's, not
 * the runtime's.
 */
export function lazyScript(turns: number): readonly ScriptedStep[] {
  const replyOf = (index: number): ModelReply | undefined => {
    if (index < turns) return toolUseReply([{ id: `toolu_bench_${index + 1}`, name: 'fetch_page', input: { page: index + 1 } }], `Reading page ${index + 1}.`);
    if (index === turns) return endTurnReply(`Read all ${turns} pages; the notes are summarised.`);
    return undefined;
  };
  return new Proxy([] as ScriptedStep[], {
    get(target, key, receiver) {
      if (key === 'length') return turns + 1;
      if (typeof key === 'string' && /^\d+$/.test(key)) return replyOf(Number(key));
      return Reflect.get(target, key, receiver);
    },
  });
}

function modelFor(turns: number) {
  return scriptedModel(lazyScript(turns), { name: 'bench-scripted' });
}

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function print(value: unknown): void {
  // Synchronous: the writer ends with process.exit right after.
  fs.writeSync(1, `${JSON.stringify(value)}\n`);
}

/** Occurrences of `text` in a file, read in chunks (a 100,000-turn journal is ~400 MB). */
function countIn(file: string, text: string): number {
  const needle = Buffer.from(text);
  const chunk = Buffer.alloc(1 << 22);
  const fd = fs.openSync(file, 'r');
  let count = 0;
  let carry = Buffer.alloc(0);
  try {
    for (let read = fs.readSync(fd, chunk); read > 0; read = fs.readSync(fd, chunk)) {
      const data = Buffer.concat([carry, chunk.subarray(0, read)]);
      for (let at = data.indexOf(needle); at !== -1; at = data.indexOf(needle, at + needle.length)) count++;
      carry = Buffer.from(data.subarray(Math.max(0, data.length - needle.length + 1)));
    }
  } finally {
    fs.closeSync(fd);
  }
  return count;
}

/** Turns of the warm-up run: every code path (compaction, snapshots) compiled before anything is timed. */
const WARM_UP_TURNS = 120;

function runOptions(store: FileStore, turns: number, contextWindow: number, observer?: (event: RunEvent) => void) {
  return {
    store,
    model: modelFor(turns),
    tools: [fetchPage],
    task: `Read the ${turns} pages of sales notes and summarise them.`,
    maxTurns: turns,
    observer,
    compaction: { mode: 'client' as const, contextWindow },
  };
}

async function write(dir: string, turns: number, contextWindow: number): Promise<void> {
  installIoCounter();
  const warm = new FileStore(path.join(dir, 'warm-up'));
  await withoutSyncs(() => startRun(runOptions(warm, WARM_UP_TURNS, contextWindow)));
  warm.close();
  fs.rmSync(path.join(dir, 'warm-up'), { recursive: true, force: true });
  const store = new FileStore(resumeStoreDir(dir));
  let compactions = 0;
  let liveMessages = 0;
  const windowFrom = Math.max(0, turns - LONG_WINDOW - 1);
  let windowStart: { t: number; cpu: NodeJS.CpuUsage; io: IoCounts; turn: number } | null = null;
  const observer = (event: RunEvent) => {
    if (event.type !== 'saved') return;
    if (event.event === 'COMPACTED') compactions++;
    if (!windowStart && event.point === 'save-b' && event.turn >= windowFrom) {
      windowStart = { t: performance.now(), cpu: process.cpuUsage(), io: ioNow(), turn: event.turn };
    }
  };
  gc();
  const baseRssKb = process.resourceUsage().maxRSS;
  const start = { t: performance.now(), cpu: process.cpuUsage(), io: ioNow() };
  const onCrash = () => {
    const at = { t: performance.now(), cpu: process.cpuUsage(start.cpu), io: ioSince(start.io) };
    const from = windowStart ?? { ...start, turn: 0 };
    const windowSpan = { ms: at.t - from.t, cpuMs: cpuMsSince(from.cpu), io: ioSince(from.io), turns: turns - from.turn };
    const peakRssKb = process.resourceUsage().maxRSS;
    gc();
    const heapUsedBytes = process.memoryUsage().heapUsed;
    const result: LongWrite = {
      turns,
      contextWindow,
      whole: { ms: at.t - start.t, cpuMs: (at.cpu.user + at.cpu.system) / 1000, io: at.io },
      window: windowSpan,
      compactions,
      snapshots: countIn(store.journalPath, '"snapshot":{'),
      peakRssKb,
      baseRssKb,
      heapUsedBytes,
      journalBytes: fs.statSync(store.journalPath).size,
      liveMessages,
    };
    print(result);
    process.exit(SIMULATED_CRASH_EXIT_CODE);
  };
  const countLive = (event: RunEvent) => {
    if (event.type === 'model-call') liveMessages = event.messages.length;
    observer(event);
  };
  await startRun({ ...runOptions(store, turns, contextWindow, countLive), crashAfter: `after-effect-write:${turns}`, onCrash });
  throw new Error(`the ${turns}-turn run was not killed at its last ledger entry`);
}

/**
 * Before a measured resume: a small run killed at its last ledger entry, then resumed, in a
 * scratch directory; so that what is timed is the resume's own work (load, fold, reconcile),
 * not the compiling of modules any process pays once.
 */
async function warmUpResume(dir: string, contextWindow: number): Promise<void> {
  const scratch = path.join(dir, 'warm-up-resume');
  const store = new FileStore(scratch);
  await withoutSyncs(() => startRun({ ...runOptions(store, WARM_UP_TURNS, contextWindow), crashAfter: `after-effect-write:${WARM_UP_TURNS}` })).catch((error: unknown) => {
    if (!(error instanceof SimulatedCrash)) throw error;
  });
  store.close();
  const again = new FileStore(scratch);
  await withoutSyncs(() => resumeRun({ store: again, model: modelFor(WARM_UP_TURNS), tools: [fetchPage] }));
  again.close();
  fs.rmSync(scratch, { recursive: true, force: true });
}

async function resume(dir: string, turns: number, contextWindow: number): Promise<void> {
  installIoCounter();
  await warmUpResume(path.dirname(dir), contextWindow);
  const store = new FileStore(resumeStoreDir(dir));
  let firstWrite: { ms: number; cpuMs: number } | null = null;
  let reconciled = '';
  // Set once every import is done, before the resume: the measured part starts here.
  gc();
  const baseRssKb = process.resourceUsage().maxRSS;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const observer = (event: RunEvent) => {
    if (event.type === 'resumed') reconciled = `from ${event.state} at turn ${event.turn}, ${event.ledgerEntries} ledger entries held`;
    if (event.type === 'reconciled') reconciled += `; ${event.call.id} ${event.decision}`;
    if (event.type === 'saved' && !firstWrite) firstWrite = { ms: performance.now() - t0, cpuMs: cpuMsSince(cpu0) };
  };
  const result = await resumeRun({ store, model: modelFor(turns), tools: [fetchPage], observer });
  const ms = performance.now() - t0;
  const cpuMs = cpuMsSince(cpu0);
  store.close();
  if (result.status !== 'done' || result.turn !== turns) throw new Error(`the resumed ${turns}-turn run ended ${result.status} at turn ${result.turn}`);
  const first = firstWrite ?? { ms, cpuMs };
  const measure: LongResume = {
    turns,
    ms,
    cpuMs,
    firstWriteMs: first.ms,
    firstWriteCpuMs: first.cpuMs,
    peakRssKb: process.resourceUsage().maxRSS,
    baseRssKb,
    detail: reconciled,
  };
  print(measure);
}

async function main(): Promise<void> {
  const [command, dir, turns, contextWindow] = process.argv.slice(2);
  if (command === 'write' && dir && turns && contextWindow) return write(dir, Number(turns), Number(contextWindow));
  if (command === 'resume' && dir && turns && contextWindow) return resume(dir, Number(turns), Number(contextWindow));
  throw new Error('usage: long-run-child.ts write|resume <dir> <turns> <contextWindow>');
}

await main();
