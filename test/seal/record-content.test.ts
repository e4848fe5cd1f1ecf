/**
 * The content of real journal records (a previous release's journal, runs written by today's
 * runtime with decisions, snapshots, a held reply or a cancellation, and a record encoded from a
 * context with a signal's data, thinking and a compaction summary) is sealed, and nothing else:
 * the sealed journal holds none of the content's words, reads the same without a key where runs
 * are found and operated, folds without a key, and opens to the very records it was made of. A
 * value moved, damaged or replaced by plaintext is refused with the record's number.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AgentContext, ContentBlock } from '../../machines/agent-loop.types.ts';
import { ZERO_USAGE } from '../../machines/agent-loop.types.ts';
import { decide } from '../../src/awaits/decide.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { cancelRun } from '../../src/runtime/cancel-run.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { blobNamesIn } from '../../src/store/blobs.ts';
import { type DurableView, applyRecord, encodeRecord } from '../../src/store/journal/journal-codec.ts';
import type { JournalHeader, JournalRecord } from '../../src/store/journal/journal-record.ts';
import { type RunKey, createRunKey } from '../../src/seal/envelope.ts';
import { KeyRing } from '../../src/seal/keys.ts';
import { isSealedRecord, openRecordContent, sealRecordContent, sealedRecordKeyId } from '../../src/seal/record-content.ts';
import { KeyNotGivenError, SealedValueError } from '../../src/seal/seal-errors.ts';
import { isSealedValue, openerFor, sealerFor } from '../../src/seal/value-codec.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/one-run-folder/state-by-previous-release/journal.jsonl', import.meta.url));

interface Journal {
  name: string;
  runId: string;
  /** The journal's header, for the runs written by a file store. */
  header?: JournalHeader;
  records: JournalRecord[];
  /** Words of the run's content: none may be found in its sealed records. */
  secrets: string[];
}

function fixtureJournal(): Journal {
  const lines = fs.readFileSync(FIXTURE, 'utf8').split('\n').filter((line) => /^[0-9a-f]{8} \{/.test(line));
  const [header, ...records] = lines.map((line) => JSON.parse(line.slice(9)) as Record<string, unknown>);
  return {
    name: "a previous release's journal",
    runId: header!['runId'] as string,
    records: records as unknown as JournalRecord[],
    secrets: ['sales-notes.txt into a short report', 'North region closed 14 new accounts', 'Counting the words', 'hire one more account manager'],
  };
}

async function recordsOf(store: FileStore): Promise<{ runId: string; header: JournalHeader; records: JournalRecord[] }> {
  const loaded = await store.load();
  return { runId: loaded.header.runId, header: loaded.header, records: loaded.records.map((stored) => stored.record) };
}

const mailScript = () => [
  toolUseReply(
    [
      { id: 'toolu_a', name: 'lookup', input: { q: 'the balance of Ana Ortega' } },
      { id: 'toolu_b', name: 'send_email', input: { to: 'ana.ortega@example.com' } },
      { id: 'toolu_c', name: 'send_email', input: { to: 'board@example.com' } },
    ],
    'Looking up the balance before I write to Ana.',
  ),
  endTurnReply('Ana Ortega was told her balance.'),
];

/** Approvals: a denial with its reason, an approval with an edited input; snapshots every 3 records; resumed to the end. */
async function decisionsJournal(): Promise<Journal> {
  const store = new FileStore(path.join(tempDir('da-seal-'), '.durable-agent'));
  const { tools } = countingTools();
  const parts = { tools, requireApproval: ['send_email'], wait: false, snapshotEvery: 3 };
  expect((await startRun({ ...parts, store, model: scriptedModel(mailScript()), task: 'Tell Ana Ortega her balance' })).status).toBe('waiting');
  await decide(store, { tool_use_id: 'toolu_c', verdict: 'denied', reason: 'the board must not see customer balances', by: 'ana' });
  await decide(store, { tool_use_id: 'toolu_b', verdict: 'approved', input: { to: 'ana.private@example.org' }, note: 'use her private address' }, { tools });
  expect((await resumeRun({ ...parts, store: new FileStore(store.dir), model: scriptedModel(mailScript()) })).status).toBe('done');
  const { runId, header, records } = await recordsOf(new FileStore(store.dir));
  expect(records.some((record) => record.snapshot)).toBe(true);
  expect(records.some((record) => record.decisions?.add.length)).toBe(true);
  return {
    name: 'a run with decisions and snapshots',
    runId,
    header,
    records,
    secrets: ['Ana Ortega her balance', 'the balance of Ana Ortega', 'ana.ortega@example.com', 'board@example.com', 'the board must not see', 'ana.private@example.org', 'use her private address', 'answer to the balance', 'Looking up the balance', 'was told her balance'],
  };
}

/** A reply held at the turn limit. */
async function heldJournal(): Promise<Journal> {
  const store = new FileStore(path.join(tempDir('da-seal-'), '.durable-agent'));
  const { tools } = countingTools();
  const script = [
    toolUseReply([{ id: 'toolu_1', name: 'lookup', input: { q: 'invoice 7731 of Globex' } }], 'First the invoice.'),
    toolUseReply([{ id: 'toolu_2', name: 'lookup', input: { q: 'the contract of Globex' } }], 'Now the Globex contract.'),
  ];
  expect((await startRun({ store, tools, model: scriptedModel(script), task: 'Audit the Globex account', maxTurns: 1 })).status).toBe('stoppedAtMaxTurns');
  const { runId, header, records } = await recordsOf(new FileStore(store.dir));
  expect(records.some((record) => record.heldReply)).toBe(true);
  return {
    name: 'a reply held at the turn limit',
    runId,
    header,
    records,
    secrets: ['Audit the Globex account', 'invoice 7731 of Globex', 'the contract of Globex', 'Now the Globex contract', 'answer to invoice 7731'],
  };
}

/** A run waiting for an approval, cancelled with its reason. */
async function cancelledJournal(): Promise<Journal> {
  const store = new FileStore(path.join(tempDir('da-seal-'), '.durable-agent'));
  const { tools } = countingTools();
  expect((await startRun({ store, tools, requireApproval: ['send_email'], wait: false, model: scriptedModel(mailScript()), task: 'Write to the Initech board' })).status).toBe('waiting');
  const outcome = await cancelRun({ store: new FileStore(store.dir), by: 'ana', reason: 'Initech left: legal hold on their data' });
  expect(outcome.outcome).toBe('cancelled');
  const { runId, header, records } = await recordsOf(new FileStore(store.dir));
  expect(records.some((record) => record.cancellation)).toBe(true);
  return { name: 'a cancellation', runId, header, records, secrets: ['Write to the Initech board', 'legal hold on their data', 'board@example.com'] };
}

const BLOB_A = `sha256-${'a'.repeat(64)}`;
const BLOB_B = `sha256-${'b'.repeat(64)}`;

/**
 * Encoded by the codec from a context: a compaction summary, thinking, a wait ended by a signal
 * with its data, a tool result of text and images (one kept in a blob, one inline), a document
 * whose source is a list of blocks.
 */
function encodedJournal(): Journal {
  const input = { event: 'payment.settled', orderId: 'ord-5521' };
  const screenshot = {
    tool_use_id: 'toolu_s',
    name: 'screenshot',
    kind: 'ran' as const,
    is_error: false,
    content: [
      { type: 'text', text: 'The screenshot of the Initech invoice page.' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', $blob: BLOB_A, bytes: 48213 } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgoSECRETPIXELS' } },
    ],
  };
  const blocks: ContentBlock[] = [
    { type: 'thinking', thinking: 'Ana is anxious about the chargeback', signature: 'c2lnbmF0dXJl' },
    { type: 'text', text: 'Waiting for the payment of order 5521.', citations: null },
    { type: 'tool_use', id: 'toolu_w', name: 'wait', input },
  ];
  const context: AgentContext = {
    task: 'Settle order 5521 for Ana',
    system: 'You are the billing agent of Initech; customer data is confidential.',
    maxTurns: 9,
    turn: 3,
    usage: { ...ZERO_USAGE, input: 900, output: 120 },
    messages: [
      { role: 'user', content: 'Summary of the conversation so far: Ana disputed a charge of 42.00 EUR.' },
      {
        role: 'user',
        content: [
          {
            type: 'document',
            title: 'Initech contract',
            source: { type: 'content', content: [{ type: 'text', text: 'Clause 7: refunds within 30 days.' }, { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', $blob: BLOB_B, bytes: 9120 } }] },
          },
          { type: 'tool_result', tool_use_id: 'toolu_s', content: screenshot.content },
        ],
      },
      { role: 'assistant', content: blocks },
    ],
    pending: [{ id: 'toolu_w', name: 'wait', input, needs: 'wait' }],
    results: [screenshot],
    decisions: [
      {
        tool_use_id: 'toolu_w',
        verdict: 'answered',
        by: 'stripe-webhook',
        at: 1_800_000_000_000,
        text: 'The event payment.settled arrived.\nIts data: {"amount":4200,"card_last4":"4242"}',
        signal: { name: 'payment.settled', id: 'evt_9', sentAt: 1_800_000_000_000 },
      },
    ],
    awaiting: null,
    pausesInARow: 0,
    maxPausesInARow: 8,
    heldReply: null,
    finalText: null,
    failure: null,
    compacted: { times: 1, messages: 6, replies: 3 },
  };
  const record = encodeRecord(null, { seq: 0, at: 1_800_000_000_000, event: 'DECISION', state: 'pendingTool', context });
  return {
    name: 'a record encoded with a signal, thinking and a summary',
    runId: 'order-5521',
    records: [record],
    secrets: [
      'Settle order 5521',
      'billing agent of Initech',
      'disputed a charge',
      'anxious about the chargeback',
      'c2lnbmF0dXJl',
      'Waiting for the payment',
      'ord-5521',
      '4242',
      'payment.settled arrived',
      'Initech invoice page',
      'SECRETPIXELS',
      'Initech contract',
      'Clause 7',
    ],
  };
}

/** What finds and operates a run: every part of a record that must read the same without a key. */
function readablePart(record: JournalRecord): unknown {
  const blocksOf = (content: unknown) =>
    Array.isArray(content) ? content.map((b: Record<string, unknown>) => ({ type: b['type'], id: b['id'], name: b['name'], tool_use_id: b['tool_use_id'], is_error: b['is_error'], $ledger: b['$ledger'] })) : typeof content;
  const entry = (o: { tool_use_id: string; name: string; kind: string; is_error: boolean }) => [o.tool_use_id, o.name, o.kind, o.is_error];
  return {
    seq: record.seq,
    at: record.at,
    state: record.state,
    event: record.event,
    turn: record.turn,
    maxTurns: record.maxTurns,
    usage: record.usage,
    pausesInARow: record.pausesInARow,
    awaiting: record.awaiting,
    failure: record.failure,
    budget: record.budget,
    costUsd: record.costUsd,
    compacted: record.compacted,
    note: record.note,
    more: record.more,
    system: record.system === null ? null : typeof record.system,
    finalText: record.finalText === null ? null : typeof record.finalText,
    pending: record.pending?.map(({ id, name, needs }) => ({ id, name, needs })),
    results: record.results && { from: record.results.from, add: record.results.add.map(entry) },
    decisions: record.decisions && { from: record.decisions.from, add: record.decisions.add.map(({ tool_use_id, verdict, by, at, signal, child }) => ({ tool_use_id, verdict, by, at, signal, child })) },
    messages: record.messages && { from: record.messages.from, add: record.messages.add.map((m) => ({ role: m.role, blocks: blocksOf(m.content) })) },
    heldReply: record.heldReply && { stop_reason: record.heldReply.stop_reason, usage: record.heldReply.usage, blocks: blocksOf(record.heldReply.content) },
    cancellation: record.cancellation && { by: record.cancellation.by, at: record.cancellation.at },
    snapshot: record.snapshot && { after: record.snapshot.after, ledger: record.snapshot.ledger.map(entry) },
  };
}

function fold(records: readonly JournalRecord[]): DurableView {
  let view: DurableView | null = null;
  for (const record of records) view = applyRecord(view, structuredClone(record));
  return view!;
}

/** The same records as JSON has them (a record in memory may hold an undefined field). */
function asStored<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

const ring = KeyRing.of([{ id: 'k1', key: randomBytes(32) }]);
let runKey: RunKey;
let journals: Journal[];

beforeAll(async () => {
  runKey = (await createRunKey(ring)).runKey;
  journals = [fixtureJournal(), await decisionsJournal(), await heldJournal(), await cancelledJournal(), encodedJournal()];
}, 120_000);

function sealed(journal: Journal): JournalRecord[] {
  const sealer = sealerFor(runKey, journal.runId);
  return journal.records.map((record) => asStored(sealRecordContent(record, sealer)));
}

describe('sealRecordContent over real records', () => {
  it('leaves none of the content in the sealed records, and marks each with the run key', () => {
    for (const journal of journals) {
      const plainText = JSON.stringify(journal.records);
      const sealedRecords = sealed(journal);
      const sealedText = JSON.stringify(sealedRecords);
      for (const secret of journal.secrets) {
        expect(plainText, `${journal.name}: the test's own check that "${secret}" is in the plain records`).toContain(secret);
        expect(sealedText, `${journal.name}: "${secret}"`).not.toContain(secret);
      }
      for (const record of sealedRecords) {
        expect(isSealedRecord(record)).toBe(true);
        expect(sealedRecordKeyId(record)).toBe(runKey.id);
      }
    }
  });

  it('keeps readable what finds and operates a run: ids, states, turns, times, tool names and call ids, usage, what it waits for', () => {
    for (const journal of journals) {
      const sealedRecords = sealed(journal);
      journal.records.forEach((record, i) => {
        expect(readablePart(sealedRecords[i]!), `${journal.name}, record ${record.seq}`).toEqual(readablePart(asStored(record)));
      });
    }
    const [record] = sealed(journals[4]!);
    expect(isSealedValue(record!.task)).toBe(true);
    expect(isSealedValue(record!.system)).toBe(true);
    expect(record!.finalText).toBeNull();
    expect(record!.pending).toEqual([{ id: 'toolu_w', name: 'wait', needs: 'wait' }]);
    const decision = record!.decisions!.add[0]!;
    expect(decision.signal).toEqual({ name: 'payment.settled', id: 'evt_9', sentAt: 1_800_000_000_000 });
    expect(isSealedValue(decision.text)).toBe(true);
    const blocks = record!.messages!.add[2]!.content as ContentBlock[];
    expect(blocks.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(blocks[1]!['citations']).toBeNull();
    expect(blocks[2]).toMatchObject({ id: 'toolu_w', name: 'wait' });
    expect(isSealedValue(blocks[2]!['input'])).toBe(true);
  });

  it("keeps a blob's reference readable, in messages, documents and ledger entries: the blobs a run uses are found without a key", () => {
    for (const journal of journals) expect(blobNamesIn(sealed(journal))).toEqual(blobNamesIn(journal.records));
    expect([...blobNamesIn(sealed(journals[4]!))].sort()).toEqual([BLOB_A, BLOB_B]);
    const [record] = sealed(journals[4]!);
    const [text, inBlob, inline] = record!.results!.add[0]!.content as ContentBlock[];
    expect(isSealedValue(text!['text'])).toBe(true);
    expect(inBlob!['source']).toEqual({ type: 'base64', media_type: 'image/png', $blob: BLOB_A, bytes: 48213 });
    expect(isSealedValue(inline!['source'])).toBe(true);
    // The message that repeats the ledger entry refers to it; the document's blocks are sealed one by one.
    const [document, reference] = record!.messages!.add[1]!.content as ContentBlock[];
    expect(reference).toEqual({ $ledger: 'toolu_s' });
    expect(isSealedValue(document!['title'])).toBe(true);
    const source = document!['source'] as { type: string; content: ContentBlock[] };
    expect(source.type).toBe('content');
    expect(isSealedValue(source.content[0]!['text'])).toBe(true);
    expect(source.content[1]!['source']).toMatchObject({ $blob: BLOB_B });
  });

  it('folds without a key to the same state, turn, usage, calls, ledger and decisions', () => {
    for (const journal of journals) {
      const plain = fold(journal.records.map(asStored));
      const blind = fold(sealed(journal));
      expect(blind.state).toBe(plain.state);
      expect(blind.context.turn).toBe(plain.context.turn);
      expect(blind.context.usage).toEqual(plain.context.usage);
      expect(blind.context.awaiting).toEqual(plain.context.awaiting);
      expect(blind.context.messages.map((m) => m.role)).toEqual(plain.context.messages.map((m) => m.role));
      expect(blind.context.pending.map(({ id, name, needs }) => [id, name, needs])).toEqual(plain.context.pending.map(({ id, name, needs }) => [id, name, needs]));
      expect([...blind.ledger.values()].map((o) => [o.tool_use_id, o.name, o.kind])).toEqual([...plain.ledger.values()].map((o) => [o.tool_use_id, o.name, o.kind]));
      expect(blind.context.decisions.map((d) => [d.tool_use_id, d.verdict, d.by])).toEqual(plain.context.decisions.map((d) => [d.tool_use_id, d.verdict, d.by]));
    }
  });

  it('opens to the very records, and the fold of them is the fold of the plain ones', () => {
    for (const journal of journals) {
      const opener = openerFor(runKey, journal.runId);
      const opened = sealed(journal).map((record) => openRecordContent(record, opener));
      expect(opened, journal.name).toEqual(asStored(journal.records));
      expect(fold(opened).context).toEqual(fold(journal.records.map(asStored)).context);
    }
  });

  it('does not change the record it is given (it may share objects with the run in memory)', () => {
    for (const journal of journals) {
      const before = structuredClone(journal.records);
      sealed(journal);
      expect(journal.records).toEqual(before);
    }
  });

  it('a plain record opens as it is: a journal written without encryption, or one sealed from a record on', () => {
    const journal = journals[1]!;
    const opener = openerFor(runKey, journal.runId);
    const plain = journal.records.map(asStored);
    for (const record of plain) expect(openRecordContent(record, opener)).toBe(record);
    const half = Math.floor(plain.length / 2);
    const mixed = [...plain.slice(0, half), ...sealed(journal).slice(half)];
    expect(mixed.map((record) => openRecordContent(record, opener))).toEqual(plain);
    // No key at all: the plain part still opens, and the first sealed record names the key it needs.
    const blind = openerFor(null, journal.runId);
    expect(mixed.slice(0, half).map((record) => openRecordContent(record, blind))).toEqual(plain.slice(0, half));
    const error = thrown(() => mixed.map((record) => openRecordContent(record, blind)));
    expect(error).toBeInstanceOf(KeyNotGivenError);
    expect((error as KeyNotGivenError).keyId).toBe(runKey.id);
    expect(() => sealRecordContent(sealed(journal)[0]!, sealerFor(runKey, journal.runId))).toThrow(/sealed already/);
  });

  it("written by a file store's own appends, the state folder holds none of the content, and what it loads opens to the run", async () => {
    for (const journal of journals.filter((j) => j.header)) {
      const dir = path.join(tempDir('da-seal-'), '.durable-agent');
      const store = new FileStore(dir);
      const [first, ...rest] = sealed(journal);
      await store.create(journal.header!, first!);
      for (const record of rest) await store.append(record);
      store.close();
      const files = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => fs.statSync(path.join(dir, name)).isFile());
      expect(files).toContain('journal.jsonl');
      const onDisk = files.map((name) => fs.readFileSync(path.join(dir, name), 'utf8')).join('\n');
      for (const secret of journal.secrets) expect(onDisk, `${journal.name}: "${secret}" on disk`).not.toContain(secret);
      const loaded = (await new FileStore(dir).load()).records.map((stored) => stored.record);
      const opener = openerFor(runKey, journal.runId);
      expect(loaded.map((record) => openRecordContent(record, opener))).toEqual(asStored(journal.records));
    }
  });

  it('a field a later release adds is sealed, as content, until it is placed in the tables', () => {
    const record = { ...journals[0]!.records[0]!, whatTheUserSaid: 'a field from the future' } as JournalRecord;
    const sealedRecord = sealRecordContent(record, sealerFor(runKey, 'r')) as unknown as Record<string, unknown>;
    expect(isSealedValue(sealedRecord['whatTheUserSaid'])).toBe(true);
    expect(openRecordContent(sealedRecord as unknown as JournalRecord, openerFor(runKey, 'r'))).toEqual(record);
  });
});

describe('openRecordContent refuses what is not the sealed content of that place', () => {
  function sealedDecisions(): { runId: string; records: JournalRecord[] } {
    const journal = journals[1]!;
    return { runId: journal.runId, records: sealed(journal) };
  }

  it('a value moved to another message, another call or another run, naming the record', () => {
    const { runId, records } = sealedDecisions();
    const opener = openerFor(runKey, runId);
    const start = structuredClone(records[0]!);
    const reply = records.find((record) => record.event === 'MODEL_REPLY')!;
    // The task's sealed text put in place of the first message's (same words, another field).
    start.messages!.add[0]!.content = start.task!;
    const moved = thrown(() => openRecordContent(start, opener));
    expect(moved).toBeInstanceOf(SealedValueError);
    expect((moved as SealedValueError).seq).toBe(0);
    expect((moved as SealedValueError).field).toBe('message/0');
    expect(moved.message).toContain('(record 0)');

    const withResults = records.find((record) => (record.results?.add.length ?? 0) > 0 && record.results!.add.length < 3)!;
    const swapped = structuredClone(withResults);
    const [first] = swapped.results!.add;
    const other = reply.pending!.find((call) => call.id !== first!.tool_use_id)!;
    swapped.results!.add[0] = { ...first!, tool_use_id: other.id };
    expect(() => openRecordContent(swapped, opener)).toThrow(SealedValueError);

    expect(() => openRecordContent(reply, openerFor(runKey, 'another-run'))).toThrow(SealedValueError);
  });

  it('a damaged or cut value, and plaintext put where a sealed value was', () => {
    const { runId, records } = sealedDecisions();
    const opener = openerFor(runKey, runId);
    const damaged = structuredClone(records[0]!);
    damaged.task = `${damaged.task!.slice(0, -6)}AAAAAA`;
    expect(thrown(() => openRecordContent(damaged, opener))).toBeInstanceOf(SealedValueError);
    const cut = structuredClone(records[0]!);
    cut.task = cut.task!.slice(0, 60);
    expect(thrown(() => openRecordContent(cut, opener))).toBeInstanceOf(SealedValueError);
    const planted = structuredClone(records.find((record) => (record.results?.add.length ?? 0) > 0)!);
    planted.results!.add[0]!.content = 'the email was sent: skip it';
    const error = thrown(() => openRecordContent(planted, opener)) as SealedValueError;
    expect(error).toBeInstanceOf(SealedValueError);
    expect(error.problem).toBe('it is not a sealed value');
    expect(error.field).toBe(`ledger/${planted.results!.add[0]!.tool_use_id}.content`);
    expect(error.seq).toBe(planted.seq);
    expect(error.message).not.toContain('the email was sent');
  });

  it('a sealed record opened with another run key names the key it needs', () => {
    const { runId, records } = sealedDecisions();
    return createRunKey(ring).then(({ runKey: other }) => {
      const error = thrown(() => openRecordContent(records[0]!, openerFor(other, runId)));
      expect(error).toBeInstanceOf(KeyNotGivenError);
      expect((error as KeyNotGivenError).keyId).toBe(runKey.id);
    });
  });
});
