/**
 * Turns machine snapshots into journal records (only what changed) and folds records back into
 * the snapshot. Pure: the stores only move the bytes.
 *
 * Changes are found by object identity, which is cheap and exact for a machine whose actions
 * only ever append to `messages` and `results`. Anything that is not a plain append falls back
 * to writing the changed tail from the first differing item, so correctness never depends on
 * the fast path.
 */
import { cancellationProblem, toolResultBlockOf } from '../../../machines/agent-loop.logic.ts';
import type {
  AgentContext,
  AgentStateName,
  Budget,
  ContentBlock,
  Message,
  PendingCall,
  ToolOutcome,
} from '../../../machines/agent-loop.types.ts';
import { MAX_PAUSES_IN_A_ROW, ZERO_USAGE } from '../../../machines/agent-loop.types.ts';
import type {
  EncodedBlock,
  EncodedMessage,
  EncodedPendingCall,
  JournalRecord,
  ListEdit,
  RecordEvent,
  FinalMark,
  RecordNote,
  SnapshotMark,
} from './journal-record.ts';
import { isLedgerRef } from './journal-record.ts';
import { awaitedProblem, compactedProblem, containerProblem, decisionProblem, messageProblem, outcomeProblem, pendingProblem, storedUsage } from './record-shape.ts';
import { DurableAgentError, type ErrorKind } from '../../util/durable-agent-error.ts';

function isStoredLedgerRef(block: unknown): boolean {
  return block !== null && typeof block === 'object' && isLedgerRef(block as EncodedBlock);
}

/** What is durable: the snapshot as of the last record, plus every ledger entry of the run. */
export interface DurableView {
  state: AgentStateName;
  context: AgentContext;
  ledger: Map<string, ToolOutcome>;
  /**
   * Set on a view read from a final record alone (see FinalMark): its context holds no messages
   * and its ledger no entries, so nothing may be written from it; `ledgerEntries` is how many a
   * load from the last snapshot holds.
   */
  fromFinalRecord?: { ledgerEntries: number } | undefined;
}

export interface TransitionToEncode {
  seq: number;
  at: number;
  event: RecordEvent;
  state: AgentStateName;
  context: AgentContext;
  note?: RecordNote;
}

export class JournalDecodeError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'JournalDecodeError';
  constructor(
    readonly seq: number,
    readonly problem: string,
  ) {
    super(`record ${seq}: ${problem}`);
  }
}

export function encodeRecord(prev: DurableView | null, next: TransitionToEncode): JournalRecord {
  const before = prev?.context;
  const ctx = next.context;
  const record: JournalRecord = {
    seq: next.seq,
    at: next.at,
    state: next.state,
    event: next.event,
  };
  if (!before || before.turn !== ctx.turn) record.turn = ctx.turn;
  if (!before || before.maxTurns !== ctx.maxTurns) record.maxTurns = ctx.maxTurns;
  if (!before || before.usage !== ctx.usage) record.usage = ctx.usage;
  if (!before || before.task !== ctx.task) record.task = ctx.task;
  if (!before || before.system !== ctx.system) record.system = ctx.system;
  if (!before || before.pausesInARow !== ctx.pausesInARow) record.pausesInARow = ctx.pausesInARow;
  if (!before || before.maxPausesInARow !== ctx.maxPausesInARow) record.maxPausesInARow = ctx.maxPausesInARow;

  // Ledger entries first: a tool_result in a new message may point at an entry added right here.
  const ledgerAfter = prev ? new LedgerOverlay(prev.ledger) : new LedgerOverlay(new Map());
  if (!before || before.results !== ctx.results) {
    const edit = listEdit(before?.results ?? [], ctx.results);
    if (edit) {
      record.results = edit;
      for (const outcome of edit.add) ledgerAfter.add(outcome);
    }
  }
  if (!before || before.messages !== ctx.messages) {
    const edit = listEdit(before?.messages ?? [], ctx.messages);
    if (edit) record.messages = { from: edit.from, add: edit.add.map((m) => encodeMessage(m, ledgerAfter)) };
  }
  if (!before || before.pending !== ctx.pending) record.pending = encodePending(ctx.pending, ctx.messages);
  if (!before || before.decisions !== ctx.decisions) {
    const edit = listEdit(before?.decisions ?? [], ctx.decisions);
    if (edit) record.decisions = edit;
  }
  // Written only when it changes, so that a run without decisions writes what it always wrote.
  if ((before?.awaiting ?? null) !== ctx.awaiting) record.awaiting = ctx.awaiting;
  if (!before || before.heldReply !== ctx.heldReply) record.heldReply = ctx.heldReply;
  if (!before || before.finalText !== ctx.finalText) record.finalText = ctx.finalText;
  if (!before || before.failure !== ctx.failure) record.failure = ctx.failure;
  // Written only when it changes, so that a run never cancelled writes what it always wrote.
  if ((before?.cancellation ?? null) !== (ctx.cancellation ?? null)) record.cancellation = ctx.cancellation ?? null;
  // Budget fields only where a run has a budget, so that every other run writes what it always wrote.
  if ((before?.budget ?? null) !== (ctx.budget ?? null)) record.budget = ctx.budget ?? null;
  if ((before?.costUsd ?? null) !== (ctx.costUsd ?? null)) record.costUsd = ctx.costUsd ?? null;
  if ((before?.budgetStop ?? null) !== (ctx.budgetStop ?? null)) record.budgetStop = ctx.budgetStop ?? null;
  // Written only when it changes, so that a run that never compacts writes what it always wrote.
  if ((before?.compacted ?? null) !== (ctx.compacted ?? null)) record.compacted = ctx.compacted ?? null;
  // Written only when it changes, so that a run without code execution writes what it always wrote.
  if ((before?.container ?? null) !== (ctx.container ?? null)) record.container = ctx.container ?? null;
  if (next.note) record.note = next.note;
  return record;
}

/**
 * The transition's record written in full, as a snapshot: every field, every list from 0, and
 * the ledger entries the state refers to, so that folding it from nothing gives the same view as
 * folding every record before it and then it (which is also what an older release does with it).
 * Tool results in messages are written as references to those entries, as in any record.
 */
export function encodeSnapshotRecord(prev: DurableView, next: TransitionToEncode, after: SnapshotMark['after']): JournalRecord {
  const ctx = next.context;
  const inResults = new Map(ctx.results.map((outcome) => [outcome.tool_use_id, outcome]));
  const ledger = new LedgerOverlay(new Map());
  const kept: ToolOutcome[] = [];
  for (const id of referencedIds(ctx)) {
    const outcome = inResults.get(id) ?? prev.ledger.get(id);
    if (!outcome) continue;
    ledger.add(outcome);
    if (!inResults.has(id)) kept.push(outcome);
  }
  for (const outcome of ctx.results) ledger.add(outcome);
  const record: JournalRecord = {
    seq: next.seq,
    at: next.at,
    state: next.state,
    event: next.event,
    snapshot: { after, ledger: kept },
    turn: ctx.turn,
    maxTurns: ctx.maxTurns,
    usage: ctx.usage,
    task: ctx.task,
    system: ctx.system,
    pausesInARow: ctx.pausesInARow,
    maxPausesInARow: ctx.maxPausesInARow,
    results: { from: 0, add: ctx.results.slice() },
    messages: { from: 0, add: ctx.messages.map((m) => encodeMessage(m, ledger)) },
    pending: encodePending(ctx.pending, ctx.messages),
    heldReply: ctx.heldReply,
    finalText: ctx.finalText,
    failure: ctx.failure,
  };
  // Left out while the run has none and had none, as in every record of a run without decisions
  // (absent is then right both for a fold from here and for one from the start).
  if (ctx.decisions.length > 0 || prev.context.decisions.length > 0) record.decisions = { from: 0, add: ctx.decisions.slice() };
  if (ctx.awaiting !== null || prev.context.awaiting !== null) record.awaiting = ctx.awaiting;
  // Fields only some runs have (a cancel, a budget): a fold from here starts without them, so they are restated whenever set.
  if (ctx.cancellation) record.cancellation = ctx.cancellation;
  if (ctx.budget) record.budget = ctx.budget;
  if (typeof ctx.costUsd === 'number') record.costUsd = ctx.costUsd;
  if (ctx.budgetStop) record.budgetStop = ctx.budgetStop;
  if (ctx.compacted) record.compacted = ctx.compacted;
  if (ctx.container) record.container = ctx.container;
  if (next.note) record.note = next.note;
  return record;
}

/** The tool_use ids the state refers to: tool results in its messages, its pending calls. */
function referencedIds(ctx: AgentContext): Set<string> {
  const ids = new Set<string>();
  for (const message of ctx.messages) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content) if (block.type === 'tool_result' && typeof block.tool_use_id === 'string') ids.add(block.tool_use_id);
  }
  for (const call of ctx.pending) ids.add(call.id);
  return ids;
}

/** The ledger a snapshot record leaves: its kept entries and its results (what a fold from it holds). */
export function ledgerOfSnapshot(record: JournalRecord): Map<string, ToolOutcome> {
  const ledger = new Map<string, ToolOutcome>();
  for (const outcome of record.snapshot?.ledger ?? []) ledger.set(outcome.tool_use_id, outcome);
  for (const outcome of record.results?.add ?? []) ledger.set(outcome.tool_use_id, outcome);
  return ledger;
}

/** Ledger entries this record adds (the effect writes it carries). */
export function ledgerEntriesOf(record: JournalRecord): ToolOutcome[] {
  return record.results?.add ?? [];
}

/**
 * Folds records into the durable view. `into` is mutated when given (folding a long journal
 * record by record must not copy the message list each time).
 */
export function applyRecord(into: DurableView | null, record: JournalRecord): DurableView {
  const view: DurableView = into ?? {
    state: record.state,
    context: emptyContext(),
    ledger: new Map(),
  };
  const ctx = view.context;
  if (record.seq !== 0 && into === null && !record.snapshot) {
    if (record.final !== undefined) return finalRecordView(record);
    throw new JournalDecodeError(record.seq, 'the first record of a run must be record 0');
  }
  if (record.snapshot) applySnapshotLedger(view, record);
  view.state = record.state;
  if (record.turn !== undefined) ctx.turn = record.turn;
  if (record.maxTurns !== undefined) ctx.maxTurns = record.maxTurns;
  if (record.usage !== undefined) ctx.usage = storedUsage(record.usage);
  if (record.task !== undefined) ctx.task = record.task;
  if (record.system !== undefined) ctx.system = record.system;
  if (record.pausesInARow !== undefined) ctx.pausesInARow = record.pausesInARow;
  if (record.maxPausesInARow !== undefined) ctx.maxPausesInARow = record.maxPausesInARow;
  if (record.results) {
    const edit = record.results;
    checkEdit(record.seq, 'results', edit, ctx.results.length);
    if (ctx.results.length !== edit.from) ctx.results.length = edit.from;
    for (const outcome of edit.add) {
      const problem = outcomeProblem(outcome);
      if (problem) throw new JournalDecodeError(record.seq, problem);
      ctx.results.push(outcome);
      view.ledger.set(outcome.tool_use_id, outcome);
    }
  }
  if (record.messages) {
    const edit = record.messages;
    checkEdit(record.seq, 'messages', edit, ctx.messages.length);
    if (ctx.messages.length !== edit.from) ctx.messages.length = edit.from;
    for (const message of edit.add) ctx.messages.push(decodeMessage(record.seq, message, view.ledger));
  }
  if (record.pending) ctx.pending = decodePending(record.seq, record.pending, ctx.messages);
  if (record.decisions) {
    const edit = record.decisions;
    checkEdit(record.seq, 'decisions', edit, ctx.decisions.length);
    if (ctx.decisions.length !== edit.from) ctx.decisions.length = edit.from;
    for (const decision of edit.add) {
      const problem = decisionProblem(decision);
      if (problem) throw new JournalDecodeError(record.seq, problem);
      ctx.decisions.push(decision);
    }
  }
  if (record.awaiting !== undefined) {
    const problem = awaitedProblem(record.awaiting);
    if (problem) throw new JournalDecodeError(record.seq, problem);
    ctx.awaiting = record.awaiting;
  }
  if (record.heldReply !== undefined) ctx.heldReply = record.heldReply;
  if (record.finalText !== undefined) ctx.finalText = record.finalText;
  if (record.failure !== undefined) ctx.failure = record.failure;
  if (record.cancellation !== undefined) {
    const problem = record.cancellation === null ? null : cancellationProblem(record.cancellation);
    if (problem) throw new JournalDecodeError(record.seq, problem);
    ctx.cancellation = record.cancellation;
  }
  if (record.budget !== undefined) ctx.budget = storedBudget(record.seq, record.budget);
  if (record.costUsd !== undefined) ctx.costUsd = storedFigure(record.seq, 'costUsd', record.costUsd);
  if (record.budgetStop !== undefined) ctx.budgetStop = record.budgetStop;
  if (record.compacted !== undefined) {
    const problem = compactedProblem(record.compacted);
    if (problem) throw new JournalDecodeError(record.seq, problem);
    ctx.compacted = record.compacted;
  }
  if (record.container !== undefined) {
    const problem = containerProblem(record.container);
    if (problem) throw new JournalDecodeError(record.seq, problem);
    ctx.container = record.container;
  }
  return view;
}

/** The mark a record that leaves the run in a final state carries: its state but the messages. */
export function encodeFinalMark(context: AgentContext, ledgerEntries: number): FinalMark {
  const kept: Partial<AgentContext> = {};
  for (const key of Object.keys(context) as (keyof AgentContext)[]) if (key !== 'messages') (kept as Record<string, unknown>)[key] = context[key];
  return { context: kept as FinalMark['context'], ledgerEntries };
}

/**
 * The view a final record gives read alone (a resume that only answers): its mark checked like
 * any record's fields, since a fold that starts from it has nothing else.
 */
function finalRecordView(record: JournalRecord): DurableView {
  const mark = record.final as Partial<FinalMark> | null;
  const given = mark?.context as Partial<AgentContext> | undefined;
  if (!mark || typeof mark !== 'object' || !given || typeof given !== 'object' || !Number.isInteger(mark.ledgerEntries)) {
    throw new JournalDecodeError(record.seq, 'the final mark is malformed');
  }
  for (const field of FINAL_FIELDS) {
    if (given[field] === undefined) throw new JournalDecodeError(record.seq, `the final mark lacks its ${field}`);
  }
  if (typeof given.turn !== 'number' || typeof given.maxTurns !== 'number' || typeof given.task !== 'string') {
    throw new JournalDecodeError(record.seq, 'the final mark\'s turn, max turns or task is not of its kind');
  }
  for (const list of [given.pending, given.results, given.decisions]) {
    if (!Array.isArray(list)) throw new JournalDecodeError(record.seq, 'a list of the final mark is not a list');
  }
  for (const outcome of given.results!) {
    const problem = outcomeProblem(outcome);
    if (problem) throw new JournalDecodeError(record.seq, problem);
  }
  for (const decision of given.decisions!) {
    const problem = decisionProblem(decision);
    if (problem) throw new JournalDecodeError(record.seq, problem);
  }
  const context: AgentContext = { ...emptyContext(), ...given, usage: storedUsage(given.usage), messages: [] };
  if (given.budget !== undefined) context.budget = storedBudget(record.seq, given.budget);
  if (given.costUsd !== undefined) context.costUsd = storedFigure(record.seq, 'costUsd', given.costUsd);
  return { state: record.state, context, ledger: new Map(), fromFinalRecord: { ledgerEntries: mark.ledgerEntries! } };
}

/** The fields a final mark always holds (the others are left out while a run has none). */
const FINAL_FIELDS = ['turn', 'maxTurns', 'usage', 'task', 'system', 'pausesInARow', 'maxPausesInARow', 'pending', 'results', 'decisions', 'awaiting', 'heldReply', 'finalText', 'failure'] as const;

/**
 * A snapshot's own entries join the ledger first (its messages refer to them). A snapshot must be
 * whole: a fold that starts from one has nothing else, so a missing field is damage.
 */
function applySnapshotLedger(view: DurableView, record: JournalRecord): void {
  const mark = record.snapshot!;
  if (!mark || typeof mark !== 'object' || !Array.isArray(mark.ledger) || !mark.after || typeof mark.after.seq !== 'number' || typeof mark.after.crc !== 'string') {
    throw new JournalDecodeError(record.seq, 'the snapshot mark is malformed');
  }
  if (mark.after.seq !== record.seq - 1) throw new JournalDecodeError(record.seq, `the snapshot says it follows record ${mark.after.seq}, not ${record.seq - 1}`);
  for (const field of SNAPSHOT_FIELDS) {
    if (record[field] === undefined) throw new JournalDecodeError(record.seq, `the snapshot lacks its ${field}`);
  }
  for (const edit of [record.results!, record.messages!, record.decisions ?? { from: 0 }]) {
    if (edit.from !== 0) throw new JournalDecodeError(record.seq, 'a snapshot\'s lists must start at 0');
  }
  for (const outcome of mark.ledger) {
    const problem = outcomeProblem(outcome);
    if (problem) throw new JournalDecodeError(record.seq, problem);
    view.ledger.set(outcome.tool_use_id, outcome);
  }
}

/** Every field but decisions and awaiting, left out while a run has none (see encodeSnapshotRecord). */
const SNAPSHOT_FIELDS = ['turn', 'maxTurns', 'usage', 'task', 'system', 'pausesInARow', 'maxPausesInARow', 'results', 'messages', 'pending', 'heldReply', 'finalText', 'failure'] as const;

/** A context the machine can take: arrays copied so later appends by the fold cannot leak in. */
export function snapshotContextOf(view: DurableView): AgentContext {
  const ctx = view.context;
  return {
    ...ctx,
    messages: ctx.messages.slice(),
    pending: ctx.pending.slice(),
    results: ctx.results.slice(),
    decisions: ctx.decisions.slice(),
  };
}

function emptyContext(): AgentContext {
  return {
    task: '',
    system: null,
    maxTurns: 0,
    turn: 0,
    usage: { ...ZERO_USAGE },
    messages: [],
    pending: [],
    results: [],
    // Journals written before decisions existed hold neither field: none, nothing awaited.
    decisions: [],
    awaiting: null,
    // Journals written before the pause limit existed hold neither field: they start from these.
    pausesInARow: 0,
    maxPausesInARow: MAX_PAUSES_IN_A_ROW,
    heldReply: null,
    finalText: null,
    failure: null,
  };
}

/** A budget as stored: limits that are not positive finite numbers are refused, never guessed at. */
function storedBudget(seq: number, raw: unknown): Budget | null {
  if (raw === null) return null;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new JournalDecodeError(seq, 'the budget is not an object');
  const { maxCostUsd, maxTotalTokens } = raw as Record<string, unknown>;
  const budget: Budget = {};
  if (maxCostUsd !== undefined) budget.maxCostUsd = storedFigure(seq, 'budget.maxCostUsd', maxCostUsd)!;
  if (maxTotalTokens !== undefined) budget.maxTotalTokens = storedFigure(seq, 'budget.maxTotalTokens', maxTotalTokens)!;
  return budget;
}

function storedFigure(seq: number, field: string, raw: unknown): number | null {
  if (raw === null && field === 'costUsd') return null;
  if (typeof raw !== 'number' || !Number.isFinite(raw) || raw < 0) throw new JournalDecodeError(seq, `${field} is ${JSON.stringify(raw)}, not an amount`);
  return raw;
}

function listEdit<T>(before: readonly T[], after: readonly T[]): ListEdit<T> | null {
  let from = before.length;
  const isAppend = after.length >= before.length && (before.length === 0 || after[before.length - 1] === before[before.length - 1]);
  if (!isAppend) {
    from = 0;
    const limit = Math.min(before.length, after.length);
    while (from < limit && after[from] === before[from]) from++;
  }
  if (from === after.length && from === before.length) return null;
  return { from, add: after.slice(from) };
}

function checkEdit(seq: number, field: string, edit: ListEdit<unknown>, currentLength: number): void {
  if (!Number.isInteger(edit.from) || edit.from < 0 || edit.from > currentLength || !Array.isArray(edit.add)) {
    throw new JournalDecodeError(seq, `${field} edit starts at ${edit.from} but only ${currentLength} exist`);
  }
}

/** Ledger lookups while encoding one record: the durable ledger plus what this record adds. */
class LedgerOverlay {
  /** Made by the first add: most records add no ledger entry. */
  private added: Map<string, ToolOutcome> | null = null;
  constructor(private readonly base: Map<string, ToolOutcome>) {}
  add(outcome: ToolOutcome): void {
    (this.added ??= new Map()).set(outcome.tool_use_id, outcome);
  }
  get(id: string): ToolOutcome | undefined {
    return this.added?.get(id) ?? this.base.get(id);
  }
}

function encodeMessage(message: Message, ledger: LedgerOverlay): EncodedMessage {
  if (typeof message.content === 'string') return message;
  let changed = false;
  const content = message.content.map((block): EncodedBlock => {
    if (block.type !== 'tool_result' || typeof block.tool_use_id !== 'string') return block;
    const outcome = ledger.get(block.tool_use_id);
    if (!outcome || !sameAsLedger(block, outcome)) return block;
    changed = true;
    return { $ledger: block.tool_use_id };
  });
  return changed ? { role: message.role, content } : message;
}

function sameAsLedger(block: ContentBlock, outcome: ToolOutcome): boolean {
  const keys = Object.keys(block);
  const expectedKeys = outcome.is_error ? 4 : 3;
  return (
    keys.length === expectedKeys &&
    block.content === outcome.content &&
    (block.is_error === true) === outcome.is_error
  );
}

function decodeMessage(seq: number, message: EncodedMessage, ledger: Map<string, ToolOutcome>): Message {
  const problem = messageProblem(message, isStoredLedgerRef);
  if (problem) throw new JournalDecodeError(seq, problem);
  if (typeof message.content === 'string') return message as Message;
  // Most messages (every assistant reply) refer to no ledger entry: they are taken as parsed, not copied.
  const encoded = message.content;
  let first = 0;
  while (first < encoded.length && !isLedgerRef(encoded[first]!)) first++;
  if (first === encoded.length) return message as Message;
  const content = encoded.slice(0, first) as ContentBlock[];
  for (let i = first; i < encoded.length; i++) {
    const block = encoded[i]!;
    if (!isLedgerRef(block)) {
      content.push(block);
      continue;
    }
    const outcome = ledger.get(block.$ledger);
    if (!outcome) throw new JournalDecodeError(seq, `refers to ledger entry ${block.$ledger}, which no earlier record holds`);
    content.push(toolResultBlockOf(outcome));
  }
  return { role: message.role, content };
}

function encodePending(pending: PendingCall[], messages: Message[]): EncodedPendingCall[] {
  const inputsInMessage = toolUseInputsOfLastAssistant(messages);
  return pending.map((call) => {
    const encoded: EncodedPendingCall =
      inputsInMessage.has(call.id) && inputsInMessage.get(call.id) === call.input
        ? { id: call.id, name: call.name }
        : { id: call.id, name: call.name, input: call.input };
    if (call.needs) encoded.needs = call.needs;
    return encoded;
  });
}

function decodePending(seq: number, pending: EncodedPendingCall[], messages: Message[]): PendingCall[] {
  if (!Array.isArray(pending)) throw new JournalDecodeError(seq, 'the pending calls are not a list');
  if (pending.length === 0) return [];
  for (const call of pending) {
    const problem = pendingProblem(call);
    if (problem) throw new JournalDecodeError(seq, problem);
  }
  const calls: PendingCall[] = [];
  for (const call of pending) {
    let input: unknown;
    if ('input' in call) {
      input = call.input;
    } else {
      const block = toolUseOfLastAssistant(messages, call.id);
      if (!block) throw new JournalDecodeError(seq, `pending call ${call.id} has no tool_use block in the last assistant message`);
      input = block.input;
    }
    calls.push(call.needs ? { id: call.id, name: call.name, input, needs: call.needs } : { id: call.id, name: call.name, input });
  }
  return calls;
}

/**
 * The last tool_use block with this id in the last assistant message (as a map of them by id
 * would hold), found without building that map: a reply names a few calls, and a resume decodes
 * the pending calls of every turn.
 */
function toolUseOfLastAssistant(messages: Message[], id: string): ContentBlock | undefined {
  const last = messages[messages.length - 1];
  if (last?.role !== 'assistant' || !Array.isArray(last.content)) return undefined;
  for (let i = last.content.length - 1; i >= 0; i--) {
    const block = last.content[i]!;
    if (block.type === 'tool_use' && block.id === id) return block;
  }
  return undefined;
}

function toolUseInputsOfLastAssistant(messages: Message[]): Map<string, unknown> {
  const inputs = new Map<string, unknown>();
  const last = messages[messages.length - 1];
  if (last && last.role === 'assistant' && Array.isArray(last.content)) {
    for (const block of last.content) if (block.type === 'tool_use') inputs.set(block.id as string, block.input);
  }
  return inputs;
}
