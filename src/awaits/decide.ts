/**
 * What waits for a person, and giving a decision, from any process: the journal is read
 * without a lock (like `status`), so both work while the run waits in another process and after
 * it stopped. A decision is checked whole before anything is written, then written to the
 * store's inbox; the run's writer makes it a DECISION record.
 */
import { isToolUseId } from '../../machines/agent-loop.logic.ts';
import { type Decision, isFinishedState, type PendingCall, type Verdict } from '../../machines/agent-loop.types.ts';
import { toolContractHash } from '../tools/tool-contract.ts';
import type { JournalHeader } from '../store/journal/journal-record.ts';
import type { RunStore } from '../store/store.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { DecisionRefusedError } from './decision-errors.ts';
import { givenFor, inboxOf, readRun } from './pending-decisions.ts';

export { type PendingDecision, pendingDecisions } from './pending-decisions.ts';

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
