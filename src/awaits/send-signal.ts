/**
 * Sending a signal to a run, from any process: checked whole (its name, id and data, and that the
 * run is there and has not ended) before anything is written, then written to the store's inbox
 * of signals; the run's wait for that event takes it, once, and its writer makes it the wait's
 * DECISION record. A signal for an event no call waits for yet is kept until one does: a sender
 * and the model's wait need not meet in time (an event sent a moment before the wait begins is
 * not lost). The journal is read without a lock, as `status` reads it.
 */
import { awaitsDecision } from '../../machines/agent-loop.logic.ts';
import { isFinishedState } from '../../machines/agent-loop.types.ts';
import { StoreMissingError } from '../store/errors.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import type { Signal, SignalDelivery } from '../store/inbox/signal-inbox.ts';
import type { RunStore } from '../store/store.ts';
import { type SignalRefusal, SignalRefusedError } from './signal-errors.ts';
import { isSignalWord, waitPlanOf } from './wait-tool.ts';

export { type SignalRefusal, SignalRefusedError } from './signal-errors.ts';

/** A signal's data goes to the model as the wait's result: more than this is refused. */
export const MAX_SIGNAL_DATA_BYTES = 64 * 1024;

export interface SignalInput {
  /** The event's name: a wait for `{ event: name }` takes it. */
  name: string;
  /** Any JSON value the wait's result carries (default none: null). */
  data?: unknown;
  /** For idempotent delivery: a signal of this name and id is taken once, however often it is sent. */
  id?: string | undefined;
  /** Who sends it (default 'api'). */
  by?: string | undefined;
}

export interface SentSignal {
  signal: Signal;
  delivery: SignalDelivery;
  /** The call that waits for this event now (it takes the signal within a second, or on the next resume); null: none yet. */
  waitingCall: string | null;
}

export async function sendSignal(store: RunStore, input: SignalInput, options: { now?: () => number } = {}): Promise<SentSignal> {
  const refuse = (reason: SignalRefusal, message: string) => new SignalRefusedError(reason, `${message} Nothing was sent.`);
  if (!isSignalWord(input.name)) throw refuse('bad-name', `${JSON.stringify(String(input.name).slice(0, 60))} is not an event name: letters, digits, "_" and "-", at most 128, as the wait call names it.`);
  if (input.id !== undefined && !isSignalWord(input.id)) throw refuse('bad-id', `${JSON.stringify(String(input.id).slice(0, 60))} is not a signal id: letters, digits, "_" and "-", at most 128.`);
  const data = input.data === undefined ? null : input.data;
  let text: string | undefined;
  try {
    text = JSON.stringify(data);
  } catch (error) {
    throw refuse('bad-data', `The signal's data is not JSON (${(error as Error).message}).`);
  }
  if (text === undefined) throw refuse('bad-data', "The signal's data is not a JSON value.");
  if (Buffer.byteLength(text) > MAX_SIGNAL_DATA_BYTES) throw refuse('bad-data', `The signal's data is ${Buffer.byteLength(text)} bytes, more than ${MAX_SIGNAL_DATA_BYTES} (the model reads it as the wait's result): send less, or where to find it.`);
  const inbox = store.signals;
  if (!inbox) throw refuse('no-run', `The store at ${store.location} takes no signals from other processes.`);
  const waitingCall = await waitingCallFor(store, input.name, refuse);
  const signal: Signal = { name: input.name, id: input.id ?? null, data: JSON.parse(text) as unknown, by: input.by ?? 'api', at: (options.now ?? Date.now)() };
  return { signal, delivery: await inbox.send(signal), waitingCall };
}

/** The call of the run that waits for this event now, or null; refuses a run that is not there or has ended. */
async function waitingCallFor(store: RunStore, name: string, refuse: (reason: SignalRefusal, message: string) => SignalRefusedError): Promise<string | null> {
  let loaded;
  try {
    if (!(await store.exists())) {
      // A fleet run not yet taken up by a worker keeps its signals for when it waits.
      if (await store.queued?.()) return null;
      throw refuse('no-run', `No run is stored at ${store.location}: give the --dir (and --run ID) of the run, or the --database-url and --run ID of a fleet run.`);
    }
    loaded = await store.load({ fromLastSnapshot: true });
  } catch (error) {
    if (error instanceof StoreMissingError) throw refuse('no-run', `No run is stored at ${store.location}.`);
    throw error;
  }
  const view = foldJournal(store.location, loaded);
  if (isFinishedState(view.state)) throw refuse('ended', `The run at ${store.location} has ended (${view.state}): no wait of it will take the signal.`);
  const { context } = view;
  const call = context.pending.find((pending) => pending.id === context.awaiting?.tool_use_id);
  if (call?.needs !== 'wait' || !awaitsDecision(context, call)) return null;
  return waitPlanOf(call.input, context.awaiting!.since)?.event === name ? call.id : null;
}
