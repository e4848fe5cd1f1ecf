/** `durable-agent status` and `durable-agent history`: read a run's store and print it. */
import { needWords, waitsForWords } from '../../awaits/wait-words.ts';
import { type DecidedCall, verdictWords } from '../../awaits/decision-trail.ts';
import { decidedText } from '../../words/decision-lines.ts';
import type { WaitingCall } from '../../core/run-events.ts';
import { budgetReachedWords, budgetWords, formatUsd, largerBudgetWords } from '../../budget/budget-words.ts';
import { type ContinuedStep, type HistoryStep, readRunHistory, type RunStatus, readRunStatus } from '../../runtime/run-status.ts';
import { type ControlRequest, requestWords } from '../../control/control-request.ts';
import type { FolderRunStore } from '../../store/store.ts';
import type { ForkOrigin, ReconcileNote } from '../../store/journal/journal-record.ts';
import type { HistoryArgs, StatusArgs } from '../args.ts';
import { payloadWords } from '../../words/payload-words.ts';
import { calledByWords, chargedWords, childRunLines } from '../../words/tree-lines.ts';
import { DEFAULT_TENANT } from '../../core/tenant.ts';
import { EXIT } from '../exit-codes.ts';
import { formatAgo, formatBytes, formatElapsed, formatUsage, keyValueLines, tableLines } from '../../words/format.ts';
import type { Writers } from '../plain-reporter.ts';
import { fileStoreOf } from '../run-store.ts';
import { folderOfState } from '../../store/open-store.ts';
import { contentWords } from '../../words/sealed-words.ts';

export async function statusCommand(args: StatusArgs, writers: Writers, now = Date.now()): Promise<number> {
  const store = fileStoreOf(args.dir, args.runId);
  const status = await readRunStatus(store);
  if (args.json) {
    writers.out(JSON.stringify(status, null, 2));
    return EXIT.done;
  }
  const pending = status.pending.length
    ? status.pending.map((call) => `${call.id} ${call.name} (${call.recorded ? 'recorded in the ledger' : 'no result yet'})`).join(', ')
    : 'none';
  const rows: Array<[string, string]> = [
    ['run', status.runId],
    ['store', status.location],
    ['task', contentWords(status.task)],
    ['state', status.state],
    ['turn', `${status.turn} of ${status.maxTurns}`],
    ['pending', pending],
    ...status.waiting.map((call): [string, string] => ['waiting', waitingText(call, now)]),
    ...decidedRows(status.decided),
    ['ledger', `${status.ledgerEntries} ${status.ledgerEntries === 1 ? 'entry' : 'entries'}`],
    ['tokens', formatUsage(status.usage)],
    ...(status.chargedUsage ? [['sub-agent tokens', chargedWords(status.usage, status.chargedUsage)] as [string, string]] : []),
    ...budgetRows(status),
    [
      'last save',
      `${status.lastSave.point} (record ${status.lastSave.seq}) at ${new Date(status.lastSave.at).toISOString()}, ${formatAgo(status.lastSave.at, now)}, ${formatBytes(status.lastSave.bytes)}`,
    ],
    ['journal', `${journalRecords(status.records, status.lastSave.seq)}, ${formatBytes(status.journalBytes)}`],
  ];
  if (status.forkedFrom) rows.splice(2, 0, ['forked from', forkedFromText(status.forkedFrom)]);
  if (status.calledBy) rows.splice(2, 0, ['called by', calledByWords(status.calledBy)]);
  if (status.tenant !== DEFAULT_TENANT) rows.splice(2, 0, ['tenant', status.tenant]);
  for (const line of childRunLines(status.children)) rows.push(['sub-agent', line]);
  for (const fork of status.forks) rows.push(['fork', `at record ${fork.seq}: run ${fork.child.runId} in ${folderOfState(fork.child.location)} (${new Date(fork.at).toISOString()})`]);
  if (status.finalText !== null) rows.push(['answer', contentWords(status.finalText)]);
  if (status.failure) rows.push(['failure', status.failure.message]);
  if (status.cancellation) rows.push(['cancelled', `${requestWords(status.cancellation)}; a resume is refused (fork it to try again from a step)`]);
  for (const request of status.controls) rows.push(controlRow(request, status.state));
  for (const step of status.continued) rows.push(['continued', continuedText(step)]);
  if (status.reconciled.length) rows.push(['reconciled', status.reconciled.map(reconcileWords).join('; ')]);
  if (status.tornTail) rows.push(['torn tail', `${status.tornTail.bytes} bytes after the last complete record (a resume drops them)`]);
  for (const line of keyValueLines(rows)) writers.out(line);
  return EXIT.done;
}

/** A request waiting in the control inbox: a pause stays until a resume clears it. */
function controlRow(request: ControlRequest, state: string): [string, string] {
  if (request.kind === 'pause') {
    return ['paused', `${requestWords(request)}: the process that drives it stops at its next step; --resume clears the pause and goes on`];
  }
  return ['cancel asked', `${requestWords(request)}: ${state === 'cancelled' ? 'done' : 'the run ends as cancelled at its next step (or when resumed)'}`];
}

/** Cost so far (counted, or estimated at the starting model's price), the budget with what is left, and a budget stop. */
function budgetRows(status: RunStatus): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  if (status.costUsd !== null) rows.push(['cost', `${status.costIsEstimate ? '≈ ' : ''}${formatUsd(status.costUsd)} at list prices${status.costIsEstimate ? ' (estimate)' : ''}`]);
  if (status.budget) rows.push(['budget', budgetWords(status.budget, status.usage, status.costUsd)]);
  if (status.budgetStop?.tenant !== undefined) {
    const flag = status.budgetStop.budget === 'cost' ? '--max-cost-usd-month' : '--max-tokens-month';
    rows.push(['stopped', `${budgetReachedWords(status.budgetStop)}: durable-agent tenant set ${status.budgetStop.tenant} ${flag} N (larger) lets it go on now; the workers go on with it when the month turns`]);
  } else if (status.budgetStop) rows.push(['stopped', `${budgetReachedWords(status.budgetStop)}: resume with a larger budget (${largerBudgetWords(status.budgetStop).join(' ')})`]);
  return rows;
}

function forkedFromText(origin: ForkOrigin): string {
  return `run ${origin.fleetRun ?? origin.runId} in ${folderOfState(origin.location)}, at its record ${origin.seq} (records 0 to ${origin.seq} here are its own), on ${new Date(origin.at).toISOString()}`;
}


function continuedText(step: ContinuedStep): string {
  return `after turn ${step.turn}, at ${new Date(step.at).toISOString()} (record ${step.seq}): ${JSON.stringify(step.message)}`;
}

function waitingText(call: WaitingCall, now: number): string {
  const need = waitsForWords(call);
  const since = call.since === null ? 'after the call above' : `since ${new Date(call.since).toISOString()} (${formatAgo(call.since, now)})`;
  return `${call.tool_use_id} ${call.name}: ${need}, ${since}`;
}

/** The run's decisions, the latest last; a long run shows its last few (status --json has them all). */
const DECIDED_SHOWN = 10;

function decidedRows(decided: readonly DecidedCall[]): Array<[string, string]> {
  const shown = decided.slice(-DECIDED_SHOWN);
  const earlier = decided.length - shown.length;
  return [
    ...(earlier > 0 ? [['decided', `${earlier} earlier ${earlier === 1 ? 'decision' : 'decisions'} (status --json lists them all)`] as [string, string]] : []),
    ...shown.map((call): [string, string] => ['decided', decidedText(call)]),
  ];
}

/**
 * Records are numbered from 0, so "record 11" is the last of "12 records": the range says so
 * and the two lines read alike.
 */
function journalRecords(count: number, lastSeq: number): string {
  if (count === 1) return `1 record (record ${lastSeq})`;
  return `${count} records (records ${lastSeq - count + 1} to ${lastSeq})`;
}

export async function historyCommand(args: HistoryArgs, writers: Writers): Promise<number> {
  const store = fileStoreOf(args.dir, args.runId);
  if (args.transcript) return transcriptCommand(store, args, writers);
  const steps = await readRunHistory(store);
  if (args.json) {
    writers.out(JSON.stringify(steps, null, 2));
    return EXIT.done;
  }
  const rows = steps.map((step) => [
    String(step.seq),
    new Date(step.at).toISOString(),
    String(step.turn),
    step.state,
    step.event,
    step.point,
    step.pending.join(',') || '-',
    formatBytes(step.bytes),
    historyNote(step),
  ]);
  for (const line of tableLines(['#', 'time', 'turn', 'state', 'event', 'saved', 'pending', 'bytes', 'note'], rows)) writers.out(line);
  for (const request of await store.control.read()) writers.out(`${request.kind === 'pause' ? 'paused' : 'cancel asked'} ${requestWords(request)} (not yet in the journal)`);
  return EXIT.done;
}

/** The terminal's width when out() writes to one; 80 otherwise (a pipe, a file). */
const NO_TERMINAL_WIDTH = 80;

async function transcriptCommand(store: FolderRunStore, args: HistoryArgs, writers: Writers): Promise<number> {
  // Loaded here: status and history without --transcript print no conversation.
  const [{ readRunTranscript }, { transcriptLines }, { withoutSealed }] = await Promise.all([
    import('../../runtime/run-transcript.ts'),
    import('../../words/transcript-lines.ts'),
    import('../../words/block-words.ts'),
  ]);
  const transcript = await readRunTranscript(store);
  if (args.json) {
    // A server tool's encrypted content and signatures are named by their size, as on every screen.
    writers.out(JSON.stringify(withoutSealed(transcript), null, 2));
    return EXIT.done;
  }
  const width = writers.terminal?.isTTY ? (writers.terminal.columns ?? NO_TERMINAL_WIDTH) : NO_TERMINAL_WIDTH;
  for (const line of transcriptLines(transcript.entries, { width, full: args.full })) writers.out(line);
  return EXIT.done;
}

/** `re-ran-idempotent toolu_1 (rule idempotent: idempotentHint of MCP server "fs")`; older journals have no rule. */
export function reconcileWords(note: ReconcileNote): string {
  const rule = note.rule && note.rule !== 'ledger-hit' ? ` (rule ${note.rule}${note.basis ? `: ${note.basis}` : ''})` : '';
  return `${note.decision} ${note.tool_use_id}${rule}`;
}

function historyNote(step: HistoryStep): string {
  const parts: string[] = [];
  const note = step.note;
  if (note?.resumed) parts.push(`resumed by pid ${note.resumed.pid} after record ${note.resumed.fromSeq}`);
  for (const reuse of note?.reused ?? []) parts.push(reconcileWords(reuse));
  if (note?.reconcile) parts.push(reconcileWords(note.reconcile));
  if (note?.reopened) parts.push(`reopened, MAX_TURNS=${note.reopened.maxTurns}`);
  if (step.forkedFrom) parts.push(`fork point: records 0 to ${step.seq} are those of run ${step.forkedFrom.runId} in ${folderOfState(step.forkedFrom.location)}`);
  for (const fork of step.forks) parts.push(`forked here into ${folderOfState(fork.child.location)} (run ${fork.child.runId})`);
  if (step.continued) parts.push(`continued with the message ${JSON.stringify(step.continued.message)}`);
  if (step.cancellation) parts.push(`cancelled ${requestWords(step.cancellation)}`);
  if (note?.charged) parts.push(`charged for the sub-agent runs of ${note.charged.calls.join(', ')}`);
  for (const child of step.subagents) parts.push(`${child.tool_use_id} → sub-agent run ${child.runId} (${child.state})`);
  for (const result of step.payloads) parts.push(`${result.tool_use_id} ${result.name}: ${result.payloads.map(payloadWords).join(' ')}`);
  if (step.waitingFor) parts.push(`${step.waitingFor.tool_use_id} waits for ${needWords(step.waitingFor.needs)}`);
  for (const decision of step.decided) {
    const waited = decision.waitedMs === null ? '' : ` (waited ${formatElapsed(decision.waitedMs)})`;
    parts.push(`${decision.tool_use_id} ${verdictWords(decision)}${waited}`);
  }
  return parts.join('; ');
}
