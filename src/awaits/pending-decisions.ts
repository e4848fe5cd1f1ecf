/**
 * The calls of a run that wait for a person, read without a lock, and the reads a decision shares
 * with them (the run folded, its inbox, what was given already). Apart from decide.ts, which also
 * checks and writes a decision: `pending` reads and never decides.
 */
import { isFinishedState, type Decision } from '../../machines/agent-loop.types.ts';
import type { WaitingCall } from '../core/run-events.ts';
import { StoreMissingError } from '../store/errors.ts';
import { InboxFileError } from '../store/inbox/inbox-errors.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import type { DurableView } from '../store/journal/journal-codec.ts';
import type { JournalHeader } from '../store/journal/journal-record.ts';
import type { DecisionInbox, RunStore } from '../store/store.ts';
import { waitingCallsOf } from './waiting-calls.ts';

/**
 * A call that waits for a person: `since` is when the run began to wait for it (null for a later
 * call of the turn, not reached yet).
 */
export interface PendingDecision extends WaitingCall {
  /** A decision for it is in the inbox, not yet taken up by the run (it is within a second, or on the next resume). */
  given: Decision | null;
  /** Its decision file is there but is no decision (damaged, or not a regular file): the run cannot take it; move it out and decide again. */
  unreadable?: { file: string; problem: string } | undefined;
}

/**
 * The calls of the run in `store` that wait for a person's decision (or a wait's event), in the
 * order they will be taken up. A call that waits for its child run is not one: its child's end
 * decides it (the child's own calls are listed with the tree's, treePendingDecisions).
 */
export async function pendingDecisions(store: RunStore): Promise<PendingDecision[]> {
  const run = await readRun(store);
  if (!run) throw new StoreMissingError(store.location, 'read');
  // An ended run's last calls are still in its state (a cancel while they waited), and wait for nothing.
  if (isFinishedState(run.view.state)) return [];
  const inbox = inboxOf(store);
  const waiting: PendingDecision[] = [];
  for (const call of waitingCallsOf(run.header.runId, run.view.context)) {
    if (call.needs === 'child') continue;
    try {
      waiting.push({ ...call, given: inbox ? await givenFor(inbox, call.tool_use_id) : null });
    } catch (error) {
      // One file in the way does not hide the other calls: it is named with the call it stands for.
      if (!(error instanceof InboxFileError)) throw error;
      waiting.push({ ...call, given: null, unreadable: { file: error.file, problem: error.problem } });
    }
  }
  return waiting;
}

export interface ReadRun {
  header: JournalHeader;
  view: DurableView;
  /** Every call the run ever saw, by id: its tool name (to tell a finished call from an unknown id). */
  knownCalls: Map<string, string>;
}

export async function readRun(store: RunStore): Promise<ReadRun | null> {
  let loaded;
  try {
    if (!(await store.exists())) return null;
    loaded = await store.load();
  } catch (error) {
    if (error instanceof StoreMissingError) return null;
    throw error;
  }
  const knownCalls = new Map<string, string>();
  const view = foldJournal(store.location, loaded, (step) => {
    for (const call of step.context.pending) knownCalls.set(call.id, call.name);
  });
  return { header: loaded.header, view, knownCalls };
}

export function inboxOf(store: RunStore): DecisionInbox | null {
  return store.decisions ?? null;
}

/** The decision in the inbox for this call; a damaged inbox file is refused, with its path, rather than taken for none. */
export async function givenFor(inbox: DecisionInbox, id: string): Promise<Decision | null> {
  if (inbox.get) return inbox.get(id);
  return (await inbox.read()).find((decision) => decision.tool_use_id === id) ?? null;
}
