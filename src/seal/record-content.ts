/**
 * Seals the content of a journal record and opens it again: a pure mapping over the record's
 * shape, following the tables of content-fields.ts. One walk serves both ways (each content slot
 * is handed to a seal or an open), so what is sealed is exactly what is opened.
 *
 * A sealed record keeps every field it had, content replaced by sealed strings (value-codec.ts),
 * and carries `sealed: <run key id>`. That mark, not the look of a value, says a record is
 * sealed: a record without it is plain and read as it is (a journal written without
 * encryption, a run started plain), and in a record with it every content slot must hold a
 * sealed value, or the record is refused: a plain value put in its place is never taken.
 *
 * Each value is bound to its place by identity, not by its position in the record: a message by
 * its index in the conversation, a ledger entry, a pending call's input and a decision by their
 * call's id. So a snapshot that restates them seals them for the same place, and a value moved
 * to another message, call or field fails its check.
 *
 * Sealing is the outermost layer of a record: a store seals after it has taken payloads out into
 * blobs (their references stay readable) and before it frames the line, whose checksum is then
 * the sealed bytes'; it opens a parsed record before it puts blob payloads back.
 */
import type { JournalRecord } from '../store/journal/journal-record.ts';
import {
  CANCELLATION_FIELDS,
  DECISION_FIELDS,
  type FieldClass,
  HELD_REPLY_FIELDS,
  LEDGER_ENTRY_FIELDS,
  MESSAGE_FIELDS,
  NESTED_BLOCKS_KEY,
  PENDING_CALL_FIELDS,
  READABLE_BLOCK_KEYS,
  RECORD_FIELDS,
  SNAPSHOT_FIELDS,
  SOURCE_KEY,
  classOf,
} from './content-fields.ts';
import { isBlobSource } from '../util/rich-blocks.ts';
import { SealedValueError } from './seal-errors.ts';
import type { ValueOpener, ValueSealer } from './value-codec.ts';

/** The field a sealed record carries: the id of the run key its content is sealed with. */
export const SEALED_MARK = 'sealed';

/** A record whose content is sealed. */
export type SealedJournalRecord = JournalRecord & { sealed: string };

/** Whether a record is sealed (it carries the mark); a plain record is read as it is. */
export function isSealedRecord(record: object): record is SealedJournalRecord {
  return Object.hasOwn(record, SEALED_MARK);
}

/** The run key a record's content needs, or null for a plain record. */
export function sealedRecordKeyId(record: object): string | null {
  const mark = (record as Record<string, unknown>)[SEALED_MARK];
  return typeof mark === 'string' ? mark : null;
}

/** The record with its content sealed; the record given is not changed (it may share objects with a run's state). */
export function sealRecordContent(record: JournalRecord, sealer: ValueSealer): SealedJournalRecord {
  if (isSealedRecord(record)) throw new TypeError(`Record ${record.seq} is sealed already: it is sealed once, by the store that writes it.`);
  const sealed = mapRecord(record as unknown as Fields, (value, field) => sealer.seal(value, field)) as unknown as SealedJournalRecord;
  sealed.sealed = sealer.keyId;
  return sealed;
}

/**
 * The record with its content opened (a plain record is given back as it is). A value that fails
 * its check is a SealedValueError naming the record; a value under a key not given, a
 * KeyNotGivenError naming the key.
 */
export function openRecordContent(record: JournalRecord, opener: ValueOpener): JournalRecord {
  if (!isSealedRecord(record)) return record;
  const seq = typeof record.seq === 'number' ? record.seq : null;
  if (typeof record.sealed !== 'string') throw new SealedValueError('mark', null, null, 'the record\'s "sealed" mark is not a key id', seq);
  try {
    const rest: Fields = { ...record };
    delete rest[SEALED_MARK];
    return mapRecord(rest, (value, field) => opener.open(value, field)) as unknown as JournalRecord;
  } catch (error) {
    if (error instanceof SealedValueError && error.seq === null && seq !== null) {
      throw new SealedValueError(error.field, error.runId, error.keyId, error.problem, seq, { cause: error });
    }
    throw error;
  }
}

type Fields = Record<string, unknown>;
/** Seals or opens one content value for its place. */
type Slot = (value: unknown, field: string) => unknown;

function isObject(value: unknown): value is Fields {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A content value: sealed or opened whole. null (and absence) is no content and stays. */
function whole(value: unknown, field: string, slot: Slot): unknown {
  return value === null || value === undefined ? value : slot(value, field);
}

function mapRecord(record: Fields, slot: Slot): Fields {
  return mapFields(record, RECORD_FIELDS, '', slot, (key, value) => {
    switch (key) {
      case 'messages':
        return mapListEdit(value, key, slot, (message, index) => mapMessage(message, `message/${index}`, slot));
      case 'results':
        return mapListEdit(value, key, slot, (entry) => mapLedgerEntry(entry, slot));
      case 'decisions':
        return mapListEdit(value, key, slot, (decision) => mapCall(decision, 'tool_use_id', DECISION_FIELDS, 'decision', slot));
      case 'pending':
        return Array.isArray(value) ? value.map((call) => mapCall(call, 'id', PENDING_CALL_FIELDS, 'pending', slot)) : whole(value, key, slot);
      case 'heldReply':
        return value === null ? null : mapObject(value, HELD_REPLY_FIELDS, 'heldReply', slot, (_, content) => mapBlocks(content, 'heldReply', slot));
      case 'cancellation':
        return value === null ? null : mapObject(value, CANCELLATION_FIELDS, 'cancellation', slot);
      case 'snapshot':
        return mapObject(value, SNAPSHOT_FIELDS, 'snapshot', slot, (_, ledger) =>
          Array.isArray(ledger) ? ledger.map((entry) => mapLedgerEntry(entry, slot)) : whole(ledger, 'snapshot.ledger', slot),
        );
      default:
        return whole(value, key, slot);
    }
  });
}

/**
 * Each key by its class in `table`: readable kept, content through the slot, parts through
 * `parts`. `prefix` names the place (`decision/toolu_01` → `decision/toolu_01.reason`).
 */
function mapFields(
  object: Fields,
  table: Readonly<Record<string, FieldClass>>,
  prefix: string,
  slot: Slot,
  parts?: (key: string, value: unknown) => unknown,
): Fields {
  const out: Fields = {};
  for (const key of Object.keys(object)) {
    const value = object[key];
    const field = prefix === '' ? key : `${prefix}.${key}`;
    const kind = classOf(table, key);
    out[key] = kind === 'readable' ? value : kind === 'parts' && parts ? parts(key, value) : whole(value, field, slot);
  }
  return out;
}

/** A structure that is not the shape it should have is content whole: nothing of it is left unsealed. */
function mapObject(
  value: unknown,
  table: Readonly<Record<string, FieldClass>>,
  prefix: string,
  slot: Slot,
  parts?: (key: string, value: unknown) => unknown,
): unknown {
  return isObject(value) ? mapFields(value, table, prefix, slot, parts) : whole(value, prefix, slot);
}

/** A list edit: where it starts is readable; each added item by its index in the whole list. */
function mapListEdit(value: unknown, field: string, slot: Slot, item: (item: unknown, index: number) => unknown): unknown {
  if (!isObject(value) || !Array.isArray(value['add']) || !Number.isSafeInteger(value['from'])) return whole(value, field, slot);
  const from = value['from'] as number;
  return { ...value, add: (value['add'] as unknown[]).map((added, i) => item(added, from + i)) };
}

function mapMessage(message: unknown, place: string, slot: Slot): unknown {
  return mapObject(message, MESSAGE_FIELDS, place, slot, (_, content) =>
    typeof content === 'string' ? slot(content, place) : mapBlocks(content, place, slot),
  );
}

/**
 * Content blocks, each keeping its readable keys (type, call id, tool name, a blob's reference)
 * and each other key sealed on its own; blocks nested in a block's `content` list the same way.
 */
function mapBlocks(blocks: unknown, place: string, slot: Slot): unknown {
  if (!Array.isArray(blocks)) return whole(blocks, place, slot);
  return blocks.map((block, b) => mapBlock(block, `${place}/${b}`, slot));
}

function mapBlock(block: unknown, at: string, slot: Slot): unknown {
  if (!isObject(block)) return whole(block, at, slot);
  const out: Fields = {};
  for (const key of Object.keys(block)) {
    const value = block[key];
    const field = `${at}.${key}`;
    if (READABLE_BLOCK_KEYS.has(key)) out[key] = value;
    else if (key === NESTED_BLOCKS_KEY && Array.isArray(value)) out[key] = mapBlocks(value, field, slot);
    else if (key === SOURCE_KEY && isObject(value)) out[key] = mapSource(value, field, slot);
    else out[key] = whole(value, field, slot);
  }
  return out;
}

/** A blob's reference stays; a document whose source is a list of blocks maps them; any other source is content whole. */
function mapSource(source: Fields, field: string, slot: Slot): unknown {
  if (isBlobSource(source)) return source;
  if (!Array.isArray(source[NESTED_BLOCKS_KEY])) return whole(source, field, slot);
  const out: Fields = {};
  for (const key of Object.keys(source)) {
    const value = source[key];
    out[key] = key === 'type' ? value : key === NESTED_BLOCKS_KEY ? mapBlocks(value, `${field}.${key}`, slot) : whole(value, `${field}.${key}`, slot);
  }
  return out;
}

/** A tool result's content: a string whole, a list of blocks block by block. */
function mapResultContent(content: unknown, place: string, slot: Slot): unknown {
  return Array.isArray(content) ? mapBlocks(content, place, slot) : whole(content, place, slot);
}

/** A ledger entry, bound to its call: the same entry in a turn's results and in a snapshot's ledger is one place. */
function mapLedgerEntry(entry: unknown, slot: Slot): unknown {
  return mapCall(entry, 'tool_use_id', LEDGER_ENTRY_FIELDS, 'ledger', slot, (place, content) => mapResultContent(content, place, slot));
}

/** An object about one call (a pending call, a ledger entry, a decision), its place named by the call's id. */
function mapCall(
  value: unknown,
  idKey: string,
  table: Readonly<Record<string, FieldClass>>,
  kind: string,
  slot: Slot,
  parts?: (place: string, value: unknown) => unknown,
): unknown {
  if (!isObject(value)) return whole(value, kind, slot);
  const prefix = `${kind}/${String(value[idKey])}`;
  return mapFields(value, table, prefix, slot, parts && ((key, part) => parts(`${prefix}.${key}`, part)));
}

/** Where a decision waiting in a fleet run's inbox is bound: not the journal's place, so neither can stand for the other. */
const INBOX_DECISION = 'inbox-decision';

/**
 * A decision as it waits in a run's inbox outside the journal (a fleet run's da_decisions), its
 * content sealed for its call, as in a record, and carrying the mark.
 */
export function sealDecisionContent<T extends object>(decision: T, sealer: ValueSealer): T & { sealed: string } {
  const sealed = mapCall(decision, 'tool_use_id', DECISION_FIELDS, INBOX_DECISION, (value, field) => sealer.seal(value, field)) as Fields;
  return { ...sealed, [SEALED_MARK]: sealer.keyId } as T & { sealed: string };
}

/** A decision of an inbox opened (a plain one is given back as it is). */
export function openDecisionContent(decision: unknown, opener: ValueOpener): unknown {
  if (!isObject(decision) || !isSealedRecord(decision)) return decision;
  const rest: Fields = { ...decision };
  delete rest[SEALED_MARK];
  return mapCall(rest, 'tool_use_id', DECISION_FIELDS, INBOX_DECISION, (value, field) => opener.open(value, field));
}
