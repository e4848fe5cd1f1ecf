/**
 * What waits for a person, and giving a decision, from any process: the journal is read
 * without a lock (like `status`), so both work while the run waits in another process and after
 * it stopped. A decision is checked whole before anything is written, then written to the
 * store's inbox; the run's writer makes it a DECISION record.
 */
import { isToolUseId } from '../../machines/agent-loop.logic.ts';
import { type Decision, isFinishedState, type PendingCall, type Verdict } from '../../machines/agent-loop.types.ts';
import type { WaitingCall } from '../core/run-events.ts';
import { toolContractHash } from '../tools/tool-contract.ts';
import { StoreMissingError } from '../store/errors.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import type { DurableView } from '../store/journal/journal-codec.ts';
import type { JournalHeader } from '../store/journal/journal-record.ts';
import type { DecisionInbox, RunStore } from '../store/store.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { DecisionRefusedError } from './decision-errors.ts';
import { InboxFileError } from '../store/inbox/inbox-errors.ts';
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

/** What a person decides; `by` defaults to 'api', `at` to now. */
export interface DecideInput {
  tool_use_id: string;
  verdict: Verdict;
  by?: string | undefined;
  note?: string | undefined;
  reason?: string | undefined;
  /** approved: the input the call runs with instead of the model's. */
  input?: unknown;
  /** answered: the answer. */
  text?: string | undefined;
}

export interface DecideOptions {
  /**
   * The tools the run was started with, to check an edited input against the tool's schema.
   * A tool is used only if its schema is the one pinned in the run's journal header.
   */
  tools?: readonly ToolDefinition[] | undefined;
  now?: () => number;
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

/**
 * Checks the decision against the journal and writes it to the inbox, or throws
 * DecisionRefusedError with nothing written.
 */
export async function decide(store: RunStore, request: DecideInput, options: DecideOptions = {}): Promise<Decision> {
  const id = request.tool_use_id;
  const refuse = (reason: DecisionRefusedError['reason'], message: string) => new DecisionRefusedError(reason, id, message);
  if (!isToolUseId(id)) {
    throw refuse('no-such-call', `${JSON.stringify(String(id).slice(0, 60))} is not a call id: a call id is a tool_use_id such as toolu_01A9… (letters, digits, "_" and "-"). Nothing was written; \`durable-agent pending\` lists the calls that wait.`);
  }
  const run = await readRun(store);
  if (!run) throw refuse('no-run', `No run is stored at ${store.location}, so ${id} waits for nothing there. Nothing was written; give the --dir of the run (the one given to demo or run).`);
  const inbox = inboxOf(store);
  if (!inbox) throw refuse('no-run', `The store at ${store.location} takes no decisions from other processes. Nothing was written.`);
  const call = run.view.context.pending.find((pending) => pending.id === id);
  const listHint = `Nothing was written; \`durable-agent pending\` lists the calls that wait.`;
  if (!call) {
    const known = run.knownCalls.get(id);
    throw known
      ? refuse('not-waiting', `${id} (${known}) is not open any more: its turn is over. ${listHint}`)
      : refuse('no-such-call', `The run at ${store.location} has no call ${id}. ${listHint}`);
  }
  // A run that ended (cancelled while it waited, say) takes nothing more, though its last turn's calls are still in its state.
  if (isFinishedState(run.view.state)) {
    throw refuse('not-waiting', `The run at ${store.location} has ended (${run.view.state}): ${id} waits for nothing any more. Nothing was written; a fork of the run can try again from one of its steps.`);
  }
  if (!call.needs) throw refuse('not-waiting', `${id} (${call.name}) does not wait for a decision: it was not flagged to need one when the model asked for it. ${listHint}`);
  const earlier = run.view.context.decisions.find((decision) => decision.tool_use_id === id);
  if (earlier) throw refuse('already-decided', `${id} (${call.name}) was already ${words(earlier)}; a call is decided once. Nothing was written.`);
  if (run.view.context.results.some((outcome) => outcome.tool_use_id === id)) {
    throw refuse('not-waiting', `${id} (${call.name}) has its result already. ${listHint}`);
  }
  const given = await givenFor(inbox, id);
  if (given) throw refuse('already-decided', `${id} (${call.name}) is already ${words(given)} (the run takes it up when it goes on); a call is decided once. Nothing was written.`);
  await checkVerdict(call, request, refuse, run.header, options.tools);
  const decision: Decision = { tool_use_id: id, verdict: request.verdict, by: request.by ?? 'api', at: (options.now ?? Date.now)() };
  if (request.note !== undefined) decision.note = request.note;
  if (request.verdict === 'denied') decision.reason = request.reason!;
  if (request.verdict === 'answered') decision.text = request.text!;
  if (request.verdict === 'approved' && request.input !== undefined) decision.input = request.input;
  if ((await inbox.write(decision)) === 'exists') {
    throw refuse('already-decided', `${id} (${call.name}) was decided by another process a moment ago; a call is decided once. Nothing was written.`);
  }
  return decision;
}

type Refuse = (reason: DecisionRefusedError['reason'], message: string) => DecisionRefusedError;

async function checkVerdict(call: PendingCall, request: DecideInput, refuse: Refuse, header: JournalHeader, tools: readonly ToolDefinition[] | undefined): Promise<void> {
  const { verdict } = request;
  const id = call.id;
  if (call.needs === 'wait' && verdict !== 'denied') {
    throw refuse('wrong-verdict', `${id} is a wait (${call.name}): it ends when its time or its event comes (\`durable-agent signal --run ID NAME\` sends an event), not by an ${verdict === 'approved' ? 'approval' : 'answer'}. Deny it with a reason to stop the wait. Nothing was written.`);
  }
  if (call.needs === 'child' && verdict !== 'denied') {
    throw refuse('wrong-verdict', `${id} (${call.name}) waits for the sub-agent run it queued: that run's end gives its result, not an ${verdict === 'approved' ? 'approval' : 'answer'}. Deny it with a reason to stop waiting (the child goes on). Nothing was written.`);
  }
  if (call.needs === 'answer' && verdict === 'approved') {
    throw refuse('wrong-verdict', `${id} is a question (${call.name}): it waits for an answer, not an approval. Give it with \`durable-agent answer ${id} TEXT\` (or deny it with a reason). Nothing was written.`);
  }
  if (call.needs === 'approval' && verdict === 'answered') {
    throw refuse('wrong-verdict', `${id} (${call.name}) waits for approval, not for an answer: approve or deny it. Nothing was written.`);
  }
  if (verdict === 'denied' && !nonEmpty(request.reason)) throw refuse('wrong-verdict', `A denial needs a reason (the model is told it). Nothing was written.`);
  if (verdict === 'answered' && !nonEmpty(request.text)) throw refuse('wrong-verdict', `An answer needs text (the model gets it as the result). Nothing was written.`);
  if (request.input !== undefined && verdict !== 'approved') throw refuse('wrong-verdict', `Only an approval takes edited input. Nothing was written.`);
  if (request.input === undefined || verdict !== 'approved') return;
  const tool = pinnedTool(call.name, header, tools);
  if (!tool) {
    throw refuse(
      'invalid-input',
      `The input schema of ${call.name} is not known here, so edited input for ${id} cannot be checked. Approve it as it is, or deny it ` +
        'with a reason saying what to change; a program can pass its tools (decide(store, decision, { tools })). Nothing was written.',
    );
  }
  // ajv is loaded only for an edited input: pending, deny and answer start without it.
  const { ToolRegistry } = await import('../tools/tool-registry.ts');
  const checked = await new ToolRegistry([tool]).checkInput(tool.name, request.input);
  if ('problem' in checked) throw refuse('invalid-input', `The edited input does not fit the input schema of ${call.name}: ${checked.problem}. Fix it and approve again. Nothing was written.`);
}

/** The tool whose input schema is the one the run pinned (its hash in the header), or null. */
function pinnedTool(name: string, header: JournalHeader, tools: readonly ToolDefinition[] | undefined): ToolDefinition | null {
  const tool = tools?.find((candidate) => candidate.name === name);
  if (!tool) return null;
  const pinned = header.startedBy?.toolSchemas[name];
  return pinned === undefined || pinned === toolContractHash(tool) ? tool : null;
}

interface ReadRun {
  header: JournalHeader;
  view: DurableView;
  /** Every call the run ever saw, by id: its tool name (to tell a finished call from an unknown id). */
  knownCalls: Map<string, string>;
}

async function readRun(store: RunStore): Promise<ReadRun | null> {
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

function inboxOf(store: RunStore): DecisionInbox | null {
  return store.decisions ?? null;
}

/** The decision in the inbox for this call; a damaged inbox file is refused, with its path, rather than taken for none. */
async function givenFor(inbox: DecisionInbox, id: string): Promise<Decision | null> {
  if (inbox.get) return inbox.get(id);
  return (await inbox.read()).find((decision) => decision.tool_use_id === id) ?? null;
}

function words(decision: Decision): string {
  const when = new Date(decision.at).toISOString();
  switch (decision.verdict) {
    case 'approved':
      return `approved by ${decision.by} at ${when}`;
    case 'denied':
      return `denied by ${decision.by} at ${when} (${decision.reason ?? ''})`;
    case 'answered':
      return `answered by ${decision.by} at ${when}`;
  }
}

function nonEmpty(text: string | undefined): text is string {
  return typeof text === 'string' && text.trim() !== '';
}
