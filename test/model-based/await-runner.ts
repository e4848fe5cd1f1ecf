/**
 * Plays a kind of await's path (walks/await-kinds.ts) on the real runtime and a real store, as a
 * user lives it: a process starts the run; where it stops waiting (status 'waiting'), the world
 * outside acts (a person decides in the inbox, a sender signals, the clock passes the deadline)
 * and the next process resumes it; and so on until the run ends. Uninterrupted, or killed at a
 * crash label, then resumed from the store alone.
 *
 * Besides the runtime's crash points, one of the test's own: `after-signal-take:<n>`, right after
 * a wait bound a signal to its call (the take is durable, its DECISION record not yet written).
 */
import { waitTool } from '../../src/awaits/wait-tool.ts';
import type { RunEvent, RunResult } from '../../src/core/run-events.ts';
import { endTurnReply, scriptedModel } from '../../src/model/scripted-model.ts';
import { CrashPoints, SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunStore, SignalInbox } from '../../src/store/store.ts';
import { type CrashPath, FINISH_TEXT } from './crash-paths.ts';
import { newWorld, type ScenarioStores, scenarioTools, type World } from './scenario-runner.ts';
import type { AwaitKind, Given } from './walks/await-kinds.ts';

/** The test's own crash label: right after the n-th signal a wait took. */
export const SIGNAL_TAKE = 'signal-take';

export interface AwaitWorld extends World {
  /** What the world gave each waiting call, in order (it outlives every kill, as the world does). */
  given: Given[];
  /** Calls the run stopped waiting for again after the world gave what ends them: a decision lost. */
  waitedAgain: string[];
  /** The `since` each process said a call waits from (its `waiting` events). */
  waitingSince: Array<{ call: string; since: number }>;
}

export function newAwaitWorld(): AwaitWorld {
  return { ...newWorld(), given: [], waitedAgain: [], waitingSince: [] };
}

export interface AwaitPlayed {
  result: RunResult | null;
  crashedAt: string | null;
  /** The runtime's crash labels passed, in order, across the processes. */
  passed: string[];
  /** How many signals waits took (each an `after-signal-take` label). */
  takes: number;
}

/**
 * Changes what each process's store does, for a test that breaks it on purpose (a wrong runtime
 * hook the checker must catch): it may replace the store's properties (its inboxes, its load).
 */
export type StoreHook = (store: RunStore) => void;

/** A process's store whose signal takes count and may crash right after one (the test's own crash point). */
function storeWithTakes(stores: ScenarioStores, key: string, takes: { count: number; armed: string | null }, hook: StoreHook | undefined): RunStore {
  const store = stores.open(key);
  const inner = store.signals;
  if (!inner) {
    hook?.(store);
    return store;
  }
  const counted: SignalInbox = {
    send: (signal) => inner.send(signal),
    takenBy: (id) => inner.takenBy(id),
    waiting: () => inner.waiting(),
    ...(inner.expect ? { expect: (wake: Parameters<NonNullable<SignalInbox['expect']>>[0]) => inner.expect!(wake) } : {}),
    take: async (name, id, before) => {
      const taken = await inner.take(name, id, before);
      if (!taken) return taken;
      const label = `after-${SIGNAL_TAKE}:${++takes.count}`;
      if (label === takes.armed) throw new SimulatedCrash(label);
      return taken;
    },
  };
  // The store's own inbox, seen through the counter (a plain property of the file and PostgreSQL stores).
  Object.defineProperty(store, 'signals', { value: counted, configurable: true });
  hook?.(store);
  return store;
}

/** The processes of the kind's path: the first starts the run (or resumes it), each next one resumes it once the world acted. */
export async function playAwaits(
  path: CrashPath,
  kind: AwaitKind,
  stores: ScenarioStores,
  key: string,
  world: AwaitWorld,
  options: { opening: 'start' | 'resume'; crashAfter?: string | undefined; hook?: StoreHook | undefined },
): Promise<AwaitPlayed> {
  const ownLabel = options.crashAfter?.startsWith(`after-${SIGNAL_TAKE}:`) ?? false;
  const crashPoints = new CrashPoints(ownLabel ? undefined : options.crashAfter);
  const takes = { count: 0, armed: ownLabel ? options.crashAfter! : null };
  const { scenario } = path;
  // A kind of a fleet's: the sub-agent tool and the queue its children go to (the parent's run id is the key).
  const fleet = kind.fleet?.partsOf(key, world);
  const tools = [...scenarioTools(scenario, world), waitTool(), ...(fleet?.tools ?? [])];
  const played = (result: RunResult | null, crashedAt: string | null): AwaitPlayed => ({ result, crashedAt, passed: crashPoints.passed, takes: takes.count });
  let opening = options.opening;
  // One process per wait and one to end, and one more: a run that keeps stopping is stopped here, and fails the checks.
  for (let process = 0; process <= kind.calls.length + 1; process++) {
    const store = storeWithTakes(stores, key, takes, options.hook);
    const parts = {
      store,
      model: scriptedModel([...scenario.replies, endTurnReply(FINISH_TEXT)]),
      tools,
      allowQuestions: true,
      wait: kind.waitsInProcess,
      crashPoints,
      toolTimeoutMs: 600_000, // no tool here hangs: a limit only a loaded disk could reach
      ...(fleet ? { childRuns: fleet.childRuns } : {}),
      observer: (event: RunEvent) => {
        if (event.type === 'waiting') world.waitingSince.push({ call: event.call.id, since: event.since });
      },
    };
    let result: RunResult;
    try {
      result = opening === 'start' ? await startRun({ ...parts, task: 'the task', maxTurns: scenario.maxTurns, maxPausesInARow: scenario.maxPausesInARow }) : await resumeRun(parts);
    } catch (error) {
      if (error instanceof SimulatedCrash) return played(null, error.label);
      throw error;
    } finally {
      stores.close(store);
    }
    opening = 'resume';
    if (result.status !== 'waiting') return played(result, null);
    const call = result.waiting?.find((waiting) => waiting.awaited);
    if (!call) throw new Error(`the run stopped waiting, for no call: ${JSON.stringify(result.waiting)}`);
    if (world.given.some((given) => given.call === call.tool_use_id)) {
      world.waitedAgain.push(call.tool_use_id);
      return played(result, null);
    }
    const outside = stores.open(key);
    try {
      await kind.give({ store: outside, key, world, gave: (given) => world.given.push(given) }, call);
    } finally {
      stores.close(outside);
    }
  }
  throw new Error(`the run of "${kind.name}" still waits after ${kind.calls.length + 2} processes`);
}
