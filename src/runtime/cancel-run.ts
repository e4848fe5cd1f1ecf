/**
 * cancelRun() and pauseRun(): ask a run to stop, from any process. The request is written to the
 * run's control inbox first (durable, whole or absent); then:
 * - cancel: if no live process holds the run (its lock or lease is free), this call takes it and
 *   writes the final `cancelled` record itself (it runs nothing of the run); otherwise the holder does it at its next boundary;
 * - pause: only a running run can be paused (nothing is written otherwise); its process stops at
 *   the next boundary, saved, and the request stays until a resume clears it (unpauseRun for a
 *   fleet run, which no worker claims while it is paused).
 */
import { SnapshotPolicy, snapshotEveryOf } from './snapshot-policy.ts';
import path from 'node:path';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import { type AgentStateName, FINAL_STATES } from '../../machines/agent-loop.types.ts';
import { type CrashAction, CrashPoints, crashHandlerOf } from './crash-points.ts';
import { JournalWriter } from './journal-writer.ts';
import { RunLockedError } from '../store/errors.ts';
import { childRunsOf } from './run-tree.ts';
import { openStore, stateFolderOf } from '../store/open-store.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import { snapshotContextOf } from '../store/journal/journal-codec.ts';
import type { RunStore } from '../store/store.ts';
import { cancellationOf, type ControlInbox, type ControlKind, ControlRefusedError, type ControlRequest, requestWords } from '../control/control-request.ts';

export interface ControlOptions {
  /** The run's store; or `dir`, the directory of a run (its store is DIR/.durable-agent). */
  store?: RunStore | undefined;
  dir?: string | undefined;
  /** Who asks, as the journal records it (default 'api'). */
  by?: string | undefined;
  /** Why (cancel only); kept with the cancelled state. */
  reason?: string | null | undefined;
  /** Drills: a crash point of the cancelled record (e.g. "after-save-cancelled:1"), and what it does. */
  crashAfter?: string | undefined;
  onCrash?: CrashAction | undefined;
}

export interface ControlOutcome {
  /**
   * cancelled: no process drove the run, and this call wrote its final cancelled record;
   * requested: the process that drives the run honours it at its next step boundary;
   * already-requested: the same request was there already (nothing written), see `request`.
   */
  outcome: 'cancelled' | 'requested' | 'already-requested';
  /**
   * True for a fleet run never started: the worker that takes it up ends it as cancelled before
   * its first model call; a paused one no worker claims until the pause is cleared.
   */
  queued?: boolean | undefined;
  request: ControlRequest;
  /** The run's state when it was asked (cancelled: now). */
  state: AgentStateName;
  turn: number;
  location: string;
  /** cancelled: the record that made it durable. */
  seq?: number | undefined;
  /** The sub-agent runs under it that the request was passed on to here (those its process drives get it from that process). */
  passedOn?: PassedOn[] | undefined;
  /** pause: no process drives the run (it waits for its sub-agent runs): the pause stops them, and keeps it where it is. */
  waitsForChildren?: boolean | undefined;
}

export interface PassedOn {
  runId: string;
  outcome: ControlOutcome['outcome'];
}

export async function cancelRun(options: ControlOptions): Promise<ControlOutcome> {
  const store = runStoreOf(options);
  const inbox = inboxOf(store);
  if (await isQueued(store)) {
    // No journal yet, so nothing to write one into here: the worker that starts it reads the request at its first step boundary.
    const asked = requestOf('cancel', options);
    const request = await put(inbox, asked);
    return { outcome: request === asked ? 'requested' : 'already-requested', request, state: 'awaitingModel', turn: 0, location: store.location, queued: true };
  }
  const before = await readState(store);
  if (FINAL_STATES.includes(before.state)) {
    throw new ControlRefusedError('cancel', 'finished', `${finishedWords(store.location, before)}: there is nothing to cancel. Nothing was written.`);
  }
  const asked = requestOf('cancel', options);
  const request = await put(inbox, asked);
  const outcome = request === asked ? 'requested' : 'already-requested';
  let lock;
  try {
    lock = await store.lock();
  } catch (error) {
    if (!(error instanceof RunLockedError)) throw error;
  }
  let ended: ControlOutcome;
  if (!lock) ended = { outcome, request, ...stateOf(before), location: store.location };
  else {
    try {
      ended = await cancelUnderLock(store, inbox, request, options);
    } finally {
      await lock.release();
    }
  }
  // Its sub-agent runs end with it, whoever drives them (a fleet's child runs on another worker, one waiting for a person).
  const passedOn = await passToChildren(store, before.runId, request);
  return passedOn.length ? { ...ended, passedOn } : ended;
}

export async function pauseRun(options: ControlOptions): Promise<ControlOutcome> {
  const store = runStoreOf(options);
  const inbox = inboxOf(store);
  if (await isQueued(store)) {
    // A fleet run no worker has started: no worker claims it while the pause is there.
    const asked = requestOf('pause', options);
    const request = await put(inbox, asked);
    return { outcome: request === asked ? 'requested' : 'already-requested', request, state: 'awaitingModel', turn: 0, location: store.location, queued: true };
  }
  const before = await readState(store);
  if (FINAL_STATES.includes(before.state)) {
    throw new ControlRefusedError('pause', 'finished', `${finishedWords(store.location, before)}: there is nothing to pause. Nothing was written.`);
  }
  let probe;
  try {
    probe = await store.lock();
  } catch (error) {
    if (!(error instanceof RunLockedError)) throw error;
  }
  if (probe) {
    await probe.release();
    // A run that waits for its sub-agent runs (a fleet's, driven by other workers) is paused in them: it stays paused with them.
    const asked = requestOf('pause', options);
    const passedOn = await passToChildren(store, before.runId, asked);
    if (passedOn.length) {
      const request = await put(inbox, asked);
      return { outcome: request === asked ? 'requested' : 'already-requested', request, ...stateOf(before), location: store.location, passedOn, waitsForChildren: true };
    }
    throw new ControlRefusedError(
      'pause',
      'not-running',
      `Nothing to pause: no process drives the run in ${store.location} (state ${before.state}, turn ${before.turn}); it stays where it is until resumed. Nothing was written.`,
    );
  }
  const asked = requestOf('pause', options);
  const request = await put(inbox, asked);
  // The driving process passes a pause on to the children it drives; those driven elsewhere get it here.
  const passedOn = store.awaitedRuns ? await passToChildren(store, before.runId, request) : [];
  return { outcome: request === asked ? 'requested' : 'already-requested', request, ...stateOf(before), location: store.location, ...(passedOn.length ? { passedOn } : {}) };
}

/** Clears a pause, so that the run goes on (a fleet's workers claim it again). False: it was not paused. */
export async function unpauseRun(options: Pick<ControlOptions, 'store' | 'dir'>): Promise<ControlRequest | null> {
  const store = runStoreOf(options);
  const inbox = inboxOf(store);
  const pause = (await inbox.read()).find((request) => request.kind === 'pause') ?? null;
  if (!pause) return null;
  await inbox.settle('pause');
  // The pause it passed on to its sub-agent runs goes with it (a resume of the run would clear theirs too).
  if (await store.exists()) {
    for (const child of await childRunsOf(store, (await store.load({ fromLastSnapshot: true })).header.runId)) await unpauseRun({ store: child.store });
  }
  return pause;
}

/**
 * Passes a cancel or a pause of the run on to its sub-agent runs that have not ended (each passes
 * it on to its own): the ones that took it. A child that ended meanwhile, or that no process
 * drives (for a pause), is left as it is.
 */
async function passToChildren(store: RunStore, runId: string, request: ControlRequest): Promise<PassedOn[]> {
  const taken: PassedOn[] = [];
  const children = (await childRunsOf(store, runId)).filter((child) => !FINAL_STATES.includes(child.state));
  // Queued and not yet started (a fleet's): no journal to read, but a worker would start it.
  const queued = store.awaitedRuns ? await queuedOf(await store.awaitedRuns()) : [];
  const targets = [...children.map((found) => ({ runId: found.runId, store: found.store })), ...queued.map((found) => ({ runId: found.runId ?? found.location, store: found }))];
  for (const { runId: childId, store: child } of targets) {
    try {
      const { outcome } =
        request.kind === 'cancel'
          ? await cancelRun({ store: child, by: request.by, reason: `its parent run ${runId} was cancelled${request.reason ? ` (${request.reason})` : ''}` })
          : await pauseRun({ store: child, by: request.by });
      taken.push({ runId: childId, outcome });
    } catch (error) {
      if (!(error instanceof ControlRefusedError)) throw error;
    }
  }
  return taken;
}

async function queuedOf(stores: readonly RunStore[]): Promise<RunStore[]> {
  const queued: RunStore[] = [];
  for (const store of stores) if (store.queued && (await store.queued())) queued.push(store);
  return queued;
}

function stateOf(found: { state: AgentStateName; turn: number }): { state: AgentStateName; turn: number } {
  return { state: found.state, turn: found.turn };
}

/** The requests waiting in a run's inbox (status shows them). */
export async function controlRequestsOf(store: RunStore): Promise<ControlRequest[]> {
  return store.control ? store.control.read() : [];
}

async function cancelUnderLock(store: RunStore, inbox: ControlInbox, request: ControlRequest, options: ControlOptions): Promise<ControlOutcome> {
  const loaded = await store.load({ repair: true });
  const view = foldJournal(store.location, loaded);
  const state = { state: view.state, turn: view.context.turn, location: store.location };
  if (view.state === 'cancelled') {
    // The process that drove the run took the request up before it stopped.
    const by = view.context.cancellation;
    await settle(inbox);
    return { outcome: 'cancelled', request: by ? { kind: 'cancel', ...by } : request, ...state, seq: loaded.records.length - 1 };
  }
  if (FINAL_STATES.includes(view.state)) {
    await inbox.settle('cancel');
    throw new ControlRefusedError('cancel', 'finished', `${finishedWords(store.location, state)} before the cancel reached it: nothing was cancelled, and the request was removed.`);
  }
  // No process drives the run: this call is its writer for one step, the cancelled record, and runs nothing of it.
  const snapshot = agentLoopMachine.resolveState({ value: view.state, context: snapshotContextOf(view) });
  const snapshots = new SnapshotPolicy(snapshotEveryOf(undefined), loaded.records[0]!.record, loaded.records[loaded.records.length - 1]!.record);
  const crash = new CrashPoints(options.crashAfter, crashHandlerOf(options.onCrash), false);
  const writer = new JournalWriter({ store, snapshots, crash, saved: () => {}, took: () => {} }, snapshot, { state: view.state, context: snapshot.context, ledger: view.ledger }, loaded.records.length);
  await writer.step({ type: 'CANCEL', cancellation: cancellationOf(request) });
  await settle(inbox);
  return { outcome: 'cancelled', request, state: 'cancelled', turn: writer.snapshot.context.turn, location: store.location, seq: loaded.records.length };
}

async function settle(inbox: ControlInbox): Promise<void> {
  await inbox.settle('cancel');
  await inbox.settle('pause');
}

async function put(inbox: ControlInbox, request: ControlRequest): Promise<ControlRequest> {
  if ((await inbox.write(request)) === 'written') return request;
  return (await inbox.read()).find((found) => found.kind === request.kind) ?? request;
}

function requestOf(kind: ControlKind, options: ControlOptions): ControlRequest {
  const by = options.by ?? 'api';
  if (typeof by !== 'string' || by.trim() === '') throw new RangeError('by must name who asks (a user name, a program); nothing was written.');
  const reason = kind === 'cancel' && options.reason != null && options.reason.trim() !== '' ? options.reason : null;
  return { kind, by, reason, at: Date.now() };
}

async function isQueued(store: RunStore): Promise<boolean> {
  return store.queued !== undefined && store.control !== undefined && (await store.queued());
}

async function readState(store: RunStore): Promise<{ state: AgentStateName; turn: number; cancelledBy: string | null; runId: string }> {
  const loaded = await store.load();
  const view = foldJournal(store.location, loaded);
  const c = view.context.cancellation;
  return { state: view.state, turn: view.context.turn, cancelledBy: c ? requestWords(c) : null, runId: loaded.header.runId };
}

function finishedWords(location: string, found: { state: AgentStateName; turn: number; cancelledBy?: string | null }): string {
  const how = found.state === 'cancelled' && found.cancelledBy ? `cancelled ${found.cancelledBy}` : found.state;
  return `The run in ${location} is finished (${how}, turn ${found.turn})`;
}

/** The run a call names: its store, or the file store of the run that works in `dir` (DIR/.durable-agent). */
export function runStoreOf(options: Pick<ControlOptions, 'store' | 'dir'>): RunStore {
  if (options.store) return options.store;
  if (options.dir !== undefined) return openStore({ dir: stateFolderOf(path.resolve(options.dir)) });
  throw new RangeError('give the run: store (a RunStore) or dir (the directory of a run); nothing was written.');
}

function inboxOf(store: RunStore): ControlInbox {
  if (!store.control) throw new RangeError(`the store of ${store.location} has no control inbox: its runs cannot be cancelled or paused from outside.`);
  return store.control;
}
