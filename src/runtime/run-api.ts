/**
 * The programmatic entry points: start a run, resume it. The CLI goes through these too.
 */
import { randomUUID } from 'node:crypto';
import { initialTransition } from 'xstate';
import { effectOfActions } from '../../machines/agent-loop.effects.ts';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import type { Model } from '../model/model.ts';
import { RunExistsError } from '../store/errors.ts';
import { foldJournal } from '../store/fold-journal.ts';
import { encodeRecord, snapshotContextOf } from '../store/journal-codec.ts';
import { JOURNAL_FORMAT, JOURNAL_VERSION } from '../store/journal-record.ts';
import type { RunStore } from '../store/store.ts';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../tools/execute-call.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { ToolRegistry } from '../tools/tool-registry.ts';
import type { CrashAction } from './crash-points.ts';
import { CrashPoints, crashHandlerOf } from './crash-points.ts';
import type { RunObserver, RunResult } from './run-events.ts';
import type { DriverParts } from './run-driver.ts';
import { RunDriver } from './run-driver.ts';

export const DEFAULT_MAX_TURNS = 20;
export const DEFAULT_MAX_TOKENS = 4096;

export interface RunParts {
  store: RunStore;
  model: Model;
  tools: readonly ToolDefinition[];
  /** Receives progress events (saves, tool calls, reconcile decisions). */
  observer?: RunObserver | undefined;
  /** Arms crash points, e.g. "after-effect-write:3" (see CRASH_AFTER). */
  crashAfter?: string | undefined;
  /**
   * What an armed crash point does: 'throw' SimulatedCrash (the default; catch it and resume),
   * 'exit' the process with code 137 as a kill would, or a function of the crash label.
   */
  onCrash?: CrashAction | undefined;
  /** Crash points made by the caller (to read which were passed); replaces crashAfter and onCrash. */
  crashPoints?: CrashPoints | undefined;
  toolTimeoutMs?: number | undefined;
  maxTokens?: number | undefined;
  /** Abort to stop the run at the next step boundary (SIGTERM in a worker, a lost lease). */
  signal?: AbortSignal | undefined;
}

export interface StartOptions extends RunParts {
  task: string;
  system?: string | null | undefined;
  maxTurns?: number | undefined;
  /** Archive an unfinished run found in the store instead of refusing to start. */
  fresh?: boolean | undefined;
}

export interface ResumeOptions extends RunParts {
  /** A new MAX_TURNS: reopens a run stopped at its limit when larger than the turns taken. */
  maxTurns?: number | undefined;
}

export async function startRun(options: StartOptions): Promise<RunResult> {
  const { store } = options;
  const parts = driverParts(options);
  const lock = await store.lock();
  try {
    const archivedPrevious = await clearFinishedRun(store, options.fresh === true);
    const runId = randomUUID();
    const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
    const [snapshot, actions] = initialTransition(agentLoopMachine, { task: options.task, system: options.system ?? null, maxTurns });
    const record = encodeRecord(null, {
      seq: 0,
      at: Date.now(),
      event: 'START',
      state: 'awaitingModel',
      context: snapshot.context,
      note: { started: { pid: process.pid } },
    });
    const receipt = await store.create({ format: JOURNAL_FORMAT, version: JOURNAL_VERSION, runId, createdAt: record.at }, record);
    const driver = new RunDriver(parts, runId, snapshot, { state: 'awaitingModel', context: snapshot.context, ledger: new Map() }, 1);
    parts.observer({
      type: 'started',
      runId,
      task: options.task,
      model: options.model.name,
      maxTurns,
      location: store.location,
      archivedPrevious,
    });
    driver.announceCreated(record, receipt);
    return await driver.drive(effectOfActions(actions));
  } finally {
    await lock.release();
  }
}

export async function resumeRun(options: ResumeOptions): Promise<RunResult> {
  const { store } = options;
  const parts = driverParts(options);
  const lock = await store.lock();
  try {
    const loaded = await store.load({ repair: true });
    const view = foldJournal(store.location, loaded);
    const snapshot = agentLoopMachine.resolveState({ value: view.state, context: snapshotContextOf(view) });
    const driver = new RunDriver(
      parts,
      loaded.header.runId,
      snapshot,
      { state: view.state, context: snapshot.context, ledger: view.ledger },
      loaded.records.length,
    );
    return await driver.resume(options.maxTurns, loaded.tornTail, loaded.records[loaded.records.length - 1]!);
  } finally {
    await lock.release();
  }
}

/**
 * Makes room for a new run: a finished run is archived; an unfinished one is archived only when
 * the user asked for a fresh start, and refused otherwise. Returns where the old run went.
 */
async function clearFinishedRun(store: RunStore, fresh: boolean): Promise<string | null> {
  if (!(await store.exists())) return null;
  if (!fresh) {
    const view = foldJournal(store.location, await store.load());
    if (view.state !== 'done') throw new RunExistsError(store.location, view.state, view.context.turn);
  }
  return store.archive();
}

function driverParts(options: RunParts): DriverParts {
  return {
    store: options.store,
    signal: options.signal,
    model: options.model,
    registry: new ToolRegistry(options.tools),
    crash: options.crashPoints ?? new CrashPoints(options.crashAfter, crashHandlerOf(options.onCrash)),
    observer: options.observer ?? (() => {}),
    toolTimeoutMs: options.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    maxTokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
  };
}
