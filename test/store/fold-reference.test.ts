/**
 * The fold that a resume runs over every record of a run is written for speed (lists edited in
 * place, messages taken as parsed unless they refer to the ledger, pending inputs found without a
 * map). Here it is held to a fold written the plain way, record by record with fresh copies, on
 * a journal whose records vary in every way the fast paths branch on; and its refusals of
 * malformed messages and calls must say exactly what they said.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { toolResultBlockOf } from '../../machines/agent-loop.logic.ts';
import type { AgentContext, Message, PendingCall, ToolOutcome } from '../../machines/agent-loop.types.ts';
import { StoreCorruptError } from '../../src/store/errors.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { JOURNAL_FORMAT, JOURNAL_VERSION, type JournalRecord } from '../../src/store/journal/journal-record.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const HEADER = { format: JOURNAL_FORMAT, version: JOURNAL_VERSION, runId: 'fold-reference', createdAt: 1 } as const;

const outcome = (id: string, content: ToolOutcome['content'], isError = false): ToolOutcome => ({ tool_use_id: id, name: 'look', kind: 'ran', content, is_error: isError });
const toolUse = (id: string, input: unknown) => ({ type: 'tool_use', id, name: 'look', input });

/** Two turns and an ending, with every kind of message, list edit and pending call the fold tells apart. */
function variedRecords(): JournalRecord[] {
  const records: Array<Omit<JournalRecord, 'seq' | 'at'>> = [
    {
      state: 'awaitingModel',
      event: 'START',
      turn: 0,
      maxTurns: 5,
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      task: 'look things up',
      system: 'be brief',
      pausesInARow: 0,
      maxPausesInARow: 8,
      messages: { from: 0, add: [{ role: 'user', content: 'look things up' }] },
      pending: [],
      heldReply: null,
      finalText: null,
      failure: null,
    },
    // A figure that is not a number reads as 0.
    { state: 'awaitingModel', event: 'MODEL_USAGE', usage: { input: 10, output: null, cacheRead: 2, cacheWrite: 0 } as never },
    {
      state: 'pendingTool',
      event: 'MODEL_REPLY',
      turn: 1,
      messages: {
        from: 1,
        // The id b twice: a pending call without its input takes the last tool_use of that id.
        add: [{ role: 'assistant', content: [{ type: 'text', text: 'looking' }, toolUse('a', { q: 1 }), toolUse('b', { q: 'first' }), toolUse('b', { q: 'second' }), toolUse('c', { q: 3 })] }],
      },
      pending: [
        { id: 'a', name: 'look' },
        { id: 'b', name: 'look' },
        { id: 'c', name: 'look', input: { q: 'edited' }, needs: 'approval' },
      ],
    },
    { state: 'pendingTool', event: 'DECISION', decisions: { from: 0, add: [{ tool_use_id: 'c', verdict: 'approved', by: 'me', at: 5 }] }, awaiting: null },
    { state: 'effectRecorded', event: 'TOOL_RESULT', results: { from: 0, add: [outcome('a', 'A'), outcome('b', [{ type: 'text', text: 'B' }], true)] } },
    { state: 'effectRecorded', event: 'TOOL_RESULT', results: { from: 2, add: [outcome('c', 'C')] } },
    {
      state: 'closed',
      event: 'CLOSE_TURN',
      results: { from: 0, add: [] },
      // References after a plain block, and a tool_result written out because it differs from its entry.
      messages: { from: 2, add: [{ role: 'user', content: [{ type: 'text', text: 'note' }, { $ledger: 'a' }, { $ledger: 'b' }, { type: 'tool_result', tool_use_id: 'c', content: 'changed' }] }] },
      pending: [],
      decisions: { from: 0, add: [] },
    },
    { state: 'awaitingModel', event: 'MODEL_USAGE', usage: { input: 30, output: 7, cacheRead: 2, cacheWrite: 1 } },
    { state: 'pendingTool', event: 'MODEL_REPLY', turn: 2, messages: { from: 3, add: [{ role: 'assistant', content: [toolUse('d', { q: 4 })] }] }, pending: [{ id: 'd', name: 'look' }] },
    { state: 'effectRecorded', event: 'TOOL_RESULT', results: { from: 0, add: [outcome('d', 'D')] } },
    // A reference first, then the same entry again.
    { state: 'closed', event: 'CLOSE_TURN', results: { from: 0, add: [] }, messages: { from: 4, add: [{ role: 'user', content: [{ $ledger: 'd' }, { $ledger: 'a' }] }] }, pending: [] },
    // A list edited from inside (as a compaction writes it): the tail is replaced.
    { state: 'awaitingModel', event: 'COMPACT', messages: { from: 3, add: [{ role: 'user', content: 'summary of the pages so far' }] } },
    { state: 'done', event: 'MODEL_REPLY', messages: { from: 4, add: [{ role: 'assistant', content: [{ type: 'text', text: 'done' }] }] }, finalText: 'done' },
  ];
  return records.map((record, seq) => ({ seq, at: 100 + seq, ...record }) as JournalRecord);
}

interface ReferenceView {
  state: string;
  context: AgentContext;
  ledger: Map<string, ToolOutcome>;
}

/** The fold written the plain way: every list rebuilt from copies, every lookup through a map. */
function referenceFold(records: readonly JournalRecord[]): ReferenceView {
  let context: AgentContext = {
    task: '',
    system: null,
    maxTurns: 0,
    turn: 0,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    messages: [],
    pending: [],
    results: [],
    decisions: [],
    awaiting: null,
    pausesInARow: 0,
    maxPausesInARow: 8,
    heldReply: null,
    finalText: null,
    failure: null,
  };
  const ledger = new Map<string, ToolOutcome>();
  let state = '';
  const figure = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
  for (const record of records) {
    state = record.state;
    const next: AgentContext = { ...context };
    for (const field of ['turn', 'maxTurns', 'task', 'system', 'pausesInARow', 'maxPausesInARow', 'awaiting', 'heldReply', 'finalText', 'failure'] as const) {
      if (record[field] !== undefined) (next as unknown as Record<string, unknown>)[field] = record[field];
    }
    if (record.usage) {
      const usage = record.usage as unknown as Record<string, unknown>;
      next.usage = { input: figure(usage.input), output: figure(usage.output), cacheRead: figure(usage.cacheRead), cacheWrite: figure(usage.cacheWrite) };
    }
    if (record.results) {
      next.results = [...context.results.slice(0, record.results.from), ...record.results.add];
      for (const entry of record.results.add) ledger.set(entry.tool_use_id, entry);
    }
    if (record.messages) {
      const decoded = record.messages.add.map((message): Message => {
        if (typeof message.content === 'string') return { role: message.role, content: message.content };
        return { role: message.role, content: message.content.map((block) => ('$ledger' in block ? toolResultBlockOf(ledger.get(block.$ledger as string)!) : block)) } as Message;
      });
      next.messages = [...context.messages.slice(0, record.messages.from), ...decoded];
    }
    if (record.pending) {
      const last = next.messages.at(-1);
      const inputs = new Map<string, unknown>();
      if (last?.role === 'assistant' && Array.isArray(last.content)) for (const block of last.content) if (block.type === 'tool_use') inputs.set(block.id as string, block.input);
      next.pending = record.pending.map((call): PendingCall => {
        const input = 'input' in call ? call.input : inputs.get(call.id);
        return call.needs ? { id: call.id, name: call.name, input, needs: call.needs } : { id: call.id, name: call.name, input };
      });
    }
    if (record.decisions) next.decisions = [...context.decisions.slice(0, record.decisions.from), ...record.decisions.add];
    context = next;
  }
  return { state, context, ledger };
}

async function fileJournalOf(records: readonly JournalRecord[]): Promise<FileStore> {
  const store = new FileStore(path.join(tempDir(), '.durable-agent'));
  await store.create(HEADER, records[0]!);
  for (const record of records.slice(1)) await store.append(record);
  store.close();
  return store;
}

/** What a resume reads and folds (from the last snapshot on: here, all of it, read back from the end). */
async function resumeFold(records: readonly JournalRecord[]) {
  const store = await fileJournalOf(records);
  return foldJournal(store.location, await store.load({ fromLastSnapshot: true }));
}

/** Records 0..6 of the varied journal, a snapshot of the state they make (after record 6, with this checksum), and one record more. */
function withSnapshot(crcOfRecord6: string): JournalRecord[] {
  const records = variedRecords().slice(0, 7);
  const { context } = referenceFold(records);
  const snapshot = {
    seq: 7,
    at: 107,
    state: 'closed',
    event: 'CLOSE_TURN',
    snapshot: { after: { seq: 6, crc: crcOfRecord6 }, ledger: [outcome('a', 'A'), outcome('b', [{ type: 'text', text: 'B' }], true)] },
    turn: context.turn,
    maxTurns: context.maxTurns,
    usage: context.usage,
    task: context.task,
    system: context.system,
    pausesInARow: context.pausesInARow,
    maxPausesInARow: context.maxPausesInARow,
    results: { from: 0, add: [] },
    messages: { from: 0, add: [...context.messages.slice(0, 2), { role: 'user', content: [{ type: 'text', text: 'note' }, { $ledger: 'a' }, { $ledger: 'b' }, { type: 'tool_result', tool_use_id: 'c', content: 'changed' }] }] },
    pending: [],
    heldReply: null,
    finalText: null,
    failure: null,
  } as JournalRecord;
  const after = { seq: 8, at: 108, state: 'awaitingModel', event: 'MODEL_USAGE', usage: { input: 40, output: 9, cacheRead: 0, cacheWrite: 0 } } as JournalRecord;
  return [...records, snapshot, after];
}

describe('the fold a resume runs', () => {
  it('gives the state, context and ledger the plain fold gives, after every record', async () => {
    const records = variedRecords();
    for (let end = 1; end <= records.length; end++) {
      const view = await resumeFold(records.slice(0, end));
      const reference = referenceFold(records.slice(0, end));
      expect(view.state, `after record ${end - 1}`).toBe(reference.state);
      expect(view.context, `after record ${end - 1}`).toEqual(reference.context);
      expect([...view.ledger], `after record ${end - 1}`).toEqual([...reference.ledger]);
    }
    // The cases the fast paths branch on were met, not skipped.
    const final = referenceFold(records.slice(0, 7)).context;
    expect(final.messages[2]!.content).toEqual([
      { type: 'text', text: 'note' },
      { type: 'tool_result', tool_use_id: 'a', content: 'A' },
      { type: 'tool_result', tool_use_id: 'b', content: [{ type: 'text', text: 'B' }], is_error: true },
      { type: 'tool_result', tool_use_id: 'c', content: 'changed' },
    ]);
    expect(referenceFold(records.slice(0, 3)).context.pending.map((call) => call.input)).toEqual([{ q: 1 }, { q: 'second' }, { q: 'edited' }]);
  });

  it('refuses a malformed message or call with the same words, wherever the bad block sits', async () => {
    const records = variedRecords().slice(0, 7);
    const refusal = async (last: Omit<JournalRecord, 'seq' | 'at'>): Promise<string> => {
      const error = await resumeFold([...records, { seq: records.length, at: 200, ...last } as JournalRecord]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreCorruptError);
      return (error as StoreCorruptError).problem;
    };
    expect(await refusal({ state: 'closed', event: 'CLOSE_TURN', messages: { from: 3, add: [{ role: 'user', content: [{ $ledger: 'a' }, null] as never }] } })).toBe(
      "a user message's content block 1 is null, not a content block",
    );
    expect(await refusal({ state: 'pendingTool', event: 'MODEL_REPLY', messages: { from: 3, add: [{ role: 'assistant', content: [{ type: 'text', text: 'x' }, { text: 'no type' }] as never }] } })).toMatch(
      /^an assistant message's content block 1 has no type: a model reply that should have been refused was stored/,
    );
    expect(await refusal({ state: 'closed', event: 'CLOSE_TURN', messages: { from: 3, add: [{ role: 'user', content: [{ type: 'text', text: 'x' }, [] as never, { $ledger: 'a' }] }] } })).toBe(
      "a user message's content block 1 is a list, not a content block",
    );
    expect(await refusal({ state: 'closed', event: 'CLOSE_TURN', messages: { from: 3, add: [{ role: 'user', content: [{ $ledger: 'nowhere' }] }] } })).toBe(
      'refers to ledger entry nowhere, which no earlier record holds',
    );
    // The last message is the user's: a call without its input has no tool_use to take it from.
    expect(await refusal({ state: 'pendingTool', event: 'MODEL_REPLY', pending: [{ id: 'a', name: 'look' }] })).toBe('pending call a has no tool_use block in the last assistant message');
    expect(
      await refusal({ state: 'pendingTool', event: 'MODEL_REPLY', messages: { from: 3, add: [{ role: 'assistant', content: [toolUse('e', {})] }] }, pending: [{ id: 'e', name: 'look' }, { id: 'f', name: 'look' }] }),
    ).toBe('pending call f has no tool_use block in the last assistant message');
  });

  it('checks a snapshot’s link to the record before it, whether the resume starts at the snapshot or folds through it', async () => {
    const firstSeven = await fileJournalOf(variedRecords().slice(0, 7));
    const crc = (await firstSeven.load()).records[6]!.crc!;
    const good = withSnapshot(crc);
    const store = await fileJournalOf(good);
    const fromSnapshot = await store.load({ fromLastSnapshot: true });
    expect(fromSnapshot.records[0]!.record.seq).toBe(7);
    const whole = await store.load();
    expect(whole.records).toHaveLength(9);
    const plain = referenceFold([...variedRecords().slice(0, 7), good[8]!]);
    for (const loaded of [fromSnapshot, whole]) {
      const view = foldJournal(store.location, loaded);
      expect(view.state).toBe('awaitingModel');
      expect(view.context).toEqual({ ...plain.context, decisions: [] });
    }

    const wrong = await fileJournalOf(withSnapshot(crc === '00000000' ? '00000001' : '00000000'));
    for (const options of [{ fromLastSnapshot: true }, {}]) {
      const error = await (async () => foldJournal(wrong.location, await wrong.load(options)))().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreCorruptError);
      expect((error as StoreCorruptError).problem).toMatch(/^snapshot record 7 says it follows record 6 with checksum 0000000[01], but record 6 has checksum [0-9a-f]{8}: the snapshot does not belong to this journal$/);
      expect(error).toMatchObject({ line: 9 });
    }
  });
});
