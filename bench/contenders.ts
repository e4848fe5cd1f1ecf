/**
 * One measured run of one contender: the whole run timed, its disk traffic counted, and what
 * its last turn alone wrote (to see whether the cost of a turn grows with the run).
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ScriptedStep } from '../src/model/scripted-model.ts';
import { startRun } from '../src/runtime/run-api.ts';
import type { RunEvent } from '../src/core/run-events.ts';
import { FileStore } from '../src/store/file-store.ts';
import { MemoryStore } from '../src/store/memory-store.ts';
import type { RunStore } from '../src/store/store.ts';
import { type IoCounts, ioNow, ioSince } from './io-counter.ts';
import { BareAppendStore } from './bare-append-store.ts';
import { NaiveStore } from './naive-store.ts';
import { appendWithSyncs, type FloorPlan, floorPlanOf, SyncTracingFileStore } from './raw-floor.ts';
import { benchRunOptions } from './workload.ts';

export const CONTENDERS = ['memory', 'durable', 'bare', 'naive', 'floor', 'paced'] as const;
export type Contender = (typeof CONTENDERS)[number];

export const CONTENDER_LABELS: Record<Contender, string> = {
  memory: 'our loop, in memory',
  durable: 'our loop, durable',
  bare: 'same loop, bare append store',
  naive: 'naive baseline',
  floor: 'raw floor',
  paced: 'paced floor (diagnostic)',
};

/** The contenders that run our loop (the floors replay its bytes instead). */
export type LoopContender = Exclude<Contender, 'floor' | 'paced'>;

export interface RunMeasure {
  ms: number;
  /** CPU time of the process (user + system) over the same span. */
  cpuMs: number;
  io: IoCounts;
  /** What turn T alone wrote (from the checkpoint B of turn T-1 to that of turn T); null for the floor. */
  lastTurn: IoCounts | null;
  /** For our durable loop: the same appends and fsyncs, for the raw floor to replay. */
  floorPlan?: FloorPlan;
  /** For the paced floor: the time it spent busy between appends (its overhead leaves it out). */
  busyMs?: number;
}

export function storeFor(contender: LoopContender, dir: string): RunStore {
  switch (contender) {
    case 'memory':
      return new MemoryStore('bench');
    case 'durable':
      return new SyncTracingFileStore(path.join(dir, '.durable-agent'));
    case 'bare':
      return new BareAppendStore(path.join(dir, 'bare'));
    case 'naive':
      return new NaiveStore(path.join(dir, 'naive'));
  }
}

export async function measureLoop(contender: LoopContender, dir: string, script: ScriptedStep[]): Promise<RunMeasure> {
  const turns = script.length - 1;
  const store = storeFor(contender, dir);
  const atCheckpointB: IoCounts[] = [];
  const observer = (event: RunEvent) => {
    if (event.type === 'saved' && event.point === 'save-b' && event.turn >= turns - 1) atCheckpointB.push(ioNow());
  };
  const options = benchRunOptions(store, script, observer);
  const start = ioNow();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await startRun(options);
  const ms = performance.now() - t0;
  const cpuMs = cpuSince(cpu0);
  const io = ioSince(start);
  const floorPlan = store instanceof SyncTracingFileStore ? floorPlanOf(store) : undefined;
  if (store instanceof FileStore || store instanceof BareAppendStore) store.close();
  if (result.status !== 'done' || result.turn !== turns) throw new Error(`${contender} run ended ${result.status} at turn ${result.turn} of ${turns}`);
  const [before, after] = turns > 1 ? atCheckpointB : [start, atCheckpointB[0]];
  if (!before || !after) throw new Error(`${contender} run: no checkpoint B seen for the last turn`);
  const lastTurn = { bytes: after.bytes - before.bytes, syncs: after.syncs - before.syncs, syncMs: after.syncMs - before.syncMs };
  return { ms, cpuMs, io, lastTurn, floorPlan };
}

/** The raw floor; with `paceMs`, the paced floor (that long busy before each append). */
export function measureFloor(dir: string, plan: FloorPlan, paceMs = 0): RunMeasure {
  const start = ioNow();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const busyMs = appendWithSyncs(path.join(dir, 'floor'), plan, paceMs);
  const ms = performance.now() - t0;
  return { ms, cpuMs: cpuSince(cpu0), io: ioSince(start), lastTurn: null, ...(paceMs > 0 ? { busyMs } : {}) };
}

function cpuSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}
