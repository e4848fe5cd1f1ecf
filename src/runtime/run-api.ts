/**
 * The programmatic entry points: start a run, resume it. The CLI goes through these too. The
 * options are taken apart once (run-pieces.ts), and each piece goes to what uses it: what a run
 * pins, how a resume is held against it and what each capability plugs into the run are the
 * settings' own (pinned-settings.ts), each made from its own fields; the driver's parts are
 * wired in run-parts.ts.
 */
import { SealingUnsupportedError } from '../seal/seal-errors.ts';
import { randomUUID } from 'node:crypto';
import { initialTransition } from 'xstate';
import { announcedEffectOf, effectOfActions } from '../../machines/agent-loop.effects.ts';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import { controlAtResume, refuseCancelled, settleControl } from '../control/run-end.ts';
import { checkContinue, checkMessageText } from '../core/continue-run.ts';
import type { RunObserver, RunResult } from '../core/run-events.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import { encodeRecord, snapshotContextOf } from '../store/journal/journal-codec.ts';
import type { LoadOptions, RunLock, RunStore } from '../store/store.ts';
import type { RunTracing } from '../telemetry/run-tracing.ts';
import { attachToStored, clearFinishedRun, runIdOf } from './attach-run.ts';
import { appliedSettings, checkResume, headerOf, originOf, pinStart, reopenedSettings, type ResumeCheck } from './pinned-settings.ts';
import { RunDriver } from './run-driver.ts';
import { type AgentResumeOptions, type AgentStartOptions, machineInputOf, type ResumeOptions, resumeOptionsOf, type StartOptions, startOptionsOf } from './run-options.ts';
import { type CheckedOptions, checkPartsOptions, driverParts } from './run-parts.ts';
import { attachedResume, type ResumePieces, resumePiecesOf, type StartPieces, startPiecesOf } from './run-pieces.ts';
import { reopenEventOf } from './take-up.ts';
import { tracedRun, withTracing } from './traced-run.ts';

export { type AgentResumeOptions, type AgentStartOptions, DEFAULT_MAX_TOKENS, DEFAULT_MAX_TURNS, type ResumeOptions, type RunParts, type StartOptions } from './run-options.ts';

/** With `agent` (defineAgent), the model, tools and policies come from it unless given, and its version is pinned. */
export async function startRun(given: StartOptions | AgentStartOptions): Promise<RunResult> {
  const options = await startOptionsOf(given);
  keysInto(options);
  const pieces = startPiecesOf(options);
  return tracedRun(pieces.tracing, 'start', pieces.command, (tracing) => start(pieces, tracing));
}

async function start(pieces: StartPieces, tracing: RunTracing | null): Promise<RunResult> {
  const { store, model, task } = pieces;
  const givenId = runIdOf(pieces.runId, store);
  const settings = await pinStart(store.location, pieces.tools, pieces.settings);
  const options = checkPartsOptions(pieces.driver);
  // What starts the run: held against a stored run's origin, or kept in a new run's header.
  const startedBy = originOf(pieces.command, model, settings, pieces.agentsModule);
  const observer = withTracing(pieces.driver.observer, tracing);
  const lock = await lockRun(store, pieces.takeOver, observer);
  try {
    if (givenId !== null && !pieces.startOver) {
      const asked = { runId: givenId, task: task.task, system: task.system ?? null, model: model.name };
      const attached = await attachToStored(store, asked, pieces.settings.agent, startedBy);
      if (attached && 'result' in attached) {
        observer({ type: 'attached', runId: givenId, status: attached.result.status, location: store.location });
        observer({ type: 'finished', result: attached.result });
        return attached.result;
      }
      // Under the lock taken here: no other process can start or drive it in between.
      if (attached) return await resumeLocked(attachedResume(pieces), tracing, { options, observer });
    }
    const archivedPrevious = await clearFinishedRun(store, pieces.startOver);
    const runId = givenId ?? randomUUID();
    const input = machineInputOf(task, settings.input);
    const [snapshot, actions] = initialTransition(agentLoopMachine, input);
    const record = encodeRecord(null, {
      seq: 0,
      at: Date.now(),
      event: 'START',
      state: 'awaitingModel',
      context: snapshot.context,
      note: { started: { pid: process.pid } },
    });
    const trace = tracing?.beginRun(runId, { model: model.name, task: task.task, maxTurns: input.maxTurns });
    const header = { ...headerOf(settings, { runId, createdAt: record.at, startedBy, trace }), ...(givenId !== null ? { runIdGiven: true as const } : {}) };
    // The driver's parts only for a run that is started here: one attached to is resumed with the settings it applies.
    const parts = driverParts(pieces.driver, options, appliedSettings(settings, pieces.settings, options.maxTokens), observer, tracing);
    const receipt = await store.create(header, record);
    // A trace exports content of a sealed run only with its key at hand (run-tracing.ts).
    if (store.sealingOfRun) tracing?.runSealing(store.sealingOfRun());
    const driver = new RunDriver(parts, runId, snapshot, { state: 'awaitingModel', context: snapshot.context, ledger: new Map() }, { first: record, last: record });
    parts.observer({ type: 'started', runId, task: task.task, model: model.name, maxTurns: input.maxTurns, location: store.location, archivedPrevious });
    await driver.announceCreated(record, receipt);
    return await settleControl(store, await driver.drive(effectOfActions(actions)));
  } finally {
    await lock.release();
  }
}

/** With `agent`, the model and tools come from it unless given; a run pinned to another version of it is refused. */
export async function resumeRun(given: ResumeOptions | AgentResumeOptions): Promise<RunResult> {
  const options = await resumeOptionsOf(given);
  keysInto(options);
  const pieces = resumePiecesOf(options);
  return tracedRun(pieces.tracing, 'resume', pieces.command, (tracing) => resume(pieces, tracing));
}

/** The keys given reach the store, which seals and opens with them; a store that cannot seal refuses them. */
function keysInto(options: StartOptions | ResumeOptions): void {
  if (options.keys === undefined) return;
  if (!options.store.giveKeys) throw new SealingUnsupportedError(options.store.location);
  options.store.giveKeys(options.keys);
}

async function resume(pieces: ResumePieces, tracing: RunTracing | null): Promise<RunResult> {
  const { store, message, maxTurns } = pieces;
  // Checked on a read that takes no lock and repairs nothing: a refused message writes nothing.
  if (message !== undefined) await checkContinuable(store, message, maxTurns);
  const options = checkPartsOptions(pieces.driver);
  const observer = withTracing(pieces.driver.observer, tracing);
  const lock = await lockRun(store, pieces.takeOver, observer);
  try {
    return await resumeLocked(pieces, tracing, { options, observer });
  } finally {
    await lock.release();
  }
}

/** What a resume has made ready before it holds the run's lock (a start that attaches, the same): its options checked, its observer traced. */
interface Ready {
  options: CheckedOptions;
  observer: RunObserver;
}

/** A resume under the run's lock, which the caller holds and releases. */
async function resumeLocked(pieces: ResumePieces, tracing: RunTracing | null, ready: Ready): Promise<RunResult> {
  const { store, message, maxTurns } = pieces;
  const resuming = { location: store.location, tools: pieces.tools, command: pieces.command, agentsModule: pieces.agentsModule, allowToolChange: pieces.allowToolChange };
  let checked: ResumeCheck | null = null;
  const loadOptions: LoadOptions = {
    repair: true,
    fromLastSnapshot: true,
    acceptLostRecord: pieces.acceptLostRecord,
    // Before the store repairs anything: a resume refused for its settings or its origin changes nothing.
    checkHeader: (header) => {
      checked = checkResume(header, resuming, pieces.settings);
    },
  };
  // A finished run that nothing here reopens answers from its final record alone.
  let loaded = await store.load({ ...loadOptions, finalRecord: message === undefined });
  // A store that does not offer the header before it repairs (a benchmark's) is checked once it has loaded.
  const { settings, origin } = checked ?? checkResume(loaded.header, resuming, pieces.settings);
  const parts = driverParts(pieces.driver, ready.options, appliedSettings(settings, pieces.settings, ready.options.maxTokens), ready.observer, tracing);
  tracing?.joinRun(loaded.header);
  let view = foldJournal(store.location, loaded);
  refuseCancelled(store.location, view.state, view.context);
  let snapshot = agentLoopMachine.resolveState({ value: view.state, context: snapshotContextOf(view) });
  const reopened = reopenedSettings(snapshot.context, pieces.settings);
  if (view.fromFinalRecord && snapshot.can(reopenEventOf({ maxTurns: maxTurns ?? snapshot.context.maxTurns, message, budget: reopened?.budget ?? null }))) {
    // It goes on: its records are written against the whole state, messages and all.
    loaded = await store.load(loadOptions);
    view = foldJournal(store.location, loaded);
    snapshot = agentLoopMachine.resolveState({ value: view.state, context: snapshotContextOf(view) });
  }
  // Again under the lock: another process may have gone on since the check above.
  if (message !== undefined) checkContinue(store.location, message, view.state, snapshot.context, maxTurns);
  const [first, last] = [loaded.records[0]!.record, loaded.records[loaded.records.length - 1]!.record];
  const driver = new RunDriver(parts, loaded.header.runId, snapshot, { state: view.state, context: snapshot.context, ledger: view.ledger, fromFinalRecord: view.fromFinalRecord }, { first, last });
  // A cancel asked while no process drove the run applies at once: nothing of the open turn is run again.
  if (await controlAtResume(store, view.state, pieces.keepPause)) {
    return await settleControl(store, await driver.drive(announcedEffectOf(view.state, snapshot.context)));
  }
  const lastStored = loaded.records[loaded.records.length - 1]!;
  return await settleControl(store, await driver.resume({ maxTurns, tornTail: loaded.tornTail, lastStored, origin, message, budgetChange: reopened?.budget ?? null }));
}

async function checkContinuable(store: RunStore, message: string, maxTurns: number | undefined): Promise<void> {
  checkMessageText(store.location, message);
  const view = foldJournal(store.location, await store.load({ fromLastSnapshot: true }));
  refuseCancelled(store.location, view.state, view.context);
  checkContinue(store.location, message, view.state, snapshotContextOf(view), maxTurns);
}

/** Takes the run's lock; a holder taken over is reported, since it may still be alive. */
async function lockRun(store: RunStore, takeOver: boolean, observer: RunObserver): Promise<RunLock> {
  const lock = await store.lock(takeOver ? { takeOver: true } : undefined);
  if (lock.takenOver) observer({ type: 'lock-taken-over', ...lock.takenOver });
  return lock;
}
