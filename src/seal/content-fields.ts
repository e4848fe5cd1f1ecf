/**
 * Which parts of a journal record are a run's content (sealed) and which are what finds and
 * operates runs (readable without a key): run id, state, turn, times, tool names and call ids,
 * usage and cost, lineage, what a run waits for. Each table is checked against its type, so a
 * field added to a record, a decision or a ledger entry does not compile until it is placed here.
 *
 * - content: the value is sealed whole (null stays null: an absent answer is not content);
 * - readable: kept as it is;
 * - parts: a structure holding both, mapped by record-content.ts.
 *
 * A key no table knows (written by a later release) is treated as content: sealing what is not
 * understood is the side that leaks nothing.
 */
import type { Cancellation, Decision, Message, ModelReply, ToolOutcome } from '../../machines/agent-loop.types.ts';
import type { EncodedPendingCall, JournalRecord, SnapshotMark } from '../store/journal/journal-record.ts';

export type FieldClass = 'content' | 'readable' | 'parts';

/** A record's own fields. */
export const RECORD_FIELDS = {
  seq: 'readable',
  at: 'readable',
  state: 'readable',
  event: 'readable',
  turn: 'readable',
  maxTurns: 'readable',
  usage: 'readable',
  pausesInARow: 'readable',
  maxPausesInARow: 'readable',
  // The task is the run's first user message; the system prompt may hold the user's data too.
  task: 'content',
  system: 'content',
  finalText: 'content',
  messages: 'parts',
  pending: 'parts',
  results: 'parts',
  decisions: 'parts',
  heldReply: 'parts',
  cancellation: 'parts',
  snapshot: 'parts',
  // What a run waits for and since when.
  awaiting: 'readable',
  // The runtime's own words (a stop reason explained, what to do next), never the model's reply.
  failure: 'readable',
  compacted: 'readable',
  container: 'readable',
  // Reconcile decisions, resume facts, which process started: ids, names and numbers.
  note: 'readable',
  budget: 'readable',
  costUsd: 'readable',
  budgetStop: 'readable',
  more: 'readable',
  // A finished run's whole state but its messages (what a resume that only answers reads): it
  // restates the task, the answer and the calls' inputs, so it is sealed whole; a reader without
  // the key folds the record's own readable fields instead.
  final: 'content',
} as const satisfies Record<keyof JournalRecord, FieldClass>;

/** A message: who spoke is readable, what was said is content (a string whole, a list block by block). */
export const MESSAGE_FIELDS = {
  role: 'readable',
  content: 'parts',
} as const satisfies Record<keyof Message, FieldClass>;

/**
 * The keys of a content block that stay readable: its type, a tool call's id and tool name, the
 * call a result answers and whether it is an error. Every other key of a block (text, input,
 * a result's content, thinking, a signature, citations, an image's source…) is content, each
 * sealed on its own, so a block keeps its shape and its type.
 */
export const READABLE_BLOCK_KEYS: ReadonlySet<string> = new Set([
  'type',
  'id',
  'name',
  'tool_use_id',
  'is_error',
  // A tool result the journal keeps once, in the ledger: this block only names the call.
  '$ledger',
]);

/**
 * A block's `content`, when it is a list, holds blocks (a tool result's, a document's, a web
 * search's results): each is mapped as a block, so the references below stay readable in them.
 * A string `content` is content whole.
 */
export const NESTED_BLOCKS_KEY = 'content';

/**
 * An image's or document's `source` that refers to a blob (its hash name, media type and
 * length) is readable, so the blobs a run refers to are found without a key (a prune must not
 * take a referenced blob for a stray one). Any other source (the bytes inline, a URL) is content.
 */
export const SOURCE_KEY = 'source';

/** A pending call: which call of which tool, and whether it waits for someone; its input is content. */
export const PENDING_CALL_FIELDS = {
  id: 'readable',
  name: 'readable',
  needs: 'readable',
  input: 'content',
} as const satisfies Record<keyof EncodedPendingCall, FieldClass>;

/** A ledger entry: which call, which tool, how it ended; what it returned is content. */
export const LEDGER_ENTRY_FIELDS = {
  tool_use_id: 'readable',
  name: 'readable',
  kind: 'readable',
  is_error: 'readable',
  // A string whole; a list of blocks block by block, as a message's.
  content: 'parts',
} as const satisfies Record<keyof ToolOutcome, FieldClass>;

/**
 * A decision: about which call, the verdict, who and when, which signal or child run ended a
 * wait (names and ids); a person's note, reason, edited input and answer, and a signal's data
 * (in the answer's text), are content.
 */
export const DECISION_FIELDS = {
  tool_use_id: 'readable',
  verdict: 'readable',
  by: 'readable',
  at: 'readable',
  signal: 'readable',
  child: 'readable',
  note: 'content',
  reason: 'content',
  input: 'content',
  text: 'content',
} as const satisfies Record<keyof Decision, FieldClass>;

/** A cancellation: who and when; why is a person's words. */
export const CANCELLATION_FIELDS = {
  by: 'readable',
  at: 'readable',
  reason: 'content',
} as const satisfies Record<keyof Cancellation, FieldClass>;

/** A reply held at the turn limit: its blocks as a message's, its stop reason, usage and model readable. */
export const HELD_REPLY_FIELDS = {
  content: 'parts',
  stop_reason: 'readable',
  usage: 'readable',
  model: 'readable',
  container: 'readable',
} as const satisfies Record<keyof ModelReply, FieldClass>;

/** A snapshot's mark: the record it follows is readable, the ledger entries it restates are mapped as entries. */
export const SNAPSHOT_FIELDS = {
  after: 'readable',
  ledger: 'parts',
} as const satisfies Record<keyof SnapshotMark, FieldClass>;

/** The class of a key in a table; a key the table does not know is content. */
export function classOf(table: Readonly<Record<string, FieldClass>>, key: string): FieldClass {
  return Object.hasOwn(table, key) ? table[key]! : 'content';
}
