/**
 * A tool whose result the journal cannot hold (a BigInt, a circular object) or that throws
 * something that is not an Error (an object without a prototype): the call ran, so it is
 * recorded as having run, the model gets an is_error result saying why, and the loop goes on.
 * On a real file store, without a crash, and crashed before and after the ledger write: a
 * resume never wedges and never runs a side effect again.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ToolOutcome } from '../../machines/agent-loop.types.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { RecordEncodeError } from '../../src/store/journal/framing.ts';
import type { JournalRecord } from '../../src/store/journal/journal-record.ts';
import type { AppendOptions } from '../../src/store/store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { describeThrown, recordableContent } from '../../src/tools/recordable.ts';
import { defineTool, type ToolDefinition } from '../../src/tools/tool.ts';
import { ExecutionCounter } from '../helpers/counting-tools.ts';
import { toolResultOf, toolUseProblems } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

type Case = { name: string; kind: ToolOutcome['kind']; says: RegExp; act: () => unknown };

const circular = (): unknown => {
  const value: Record<string, unknown> = { name: 'loop' };
  value.self = value;
  return value;
};

const CASES: Case[] = [
  { name: 'returns a BigInt', kind: 'ran', says: /ran, but its result could not be recorded: it holds a BigInt/, act: () => ({ total: 10n ** 20n }) },
  { name: 'returns a circular object', kind: 'ran', says: /ran, but its result could not be recorded: it refers to itself/, act: circular },
  {
    name: 'throws an object without a prototype',
    kind: 'threw',
    says: /failed: it threw a value that is not an Error: \[Object: null prototype\] \{ code: 'E_NULL' \}/,
    act: () => {
      const thrown = Object.create(null) as Record<string, unknown>;
      thrown.code = 'E_NULL';
      throw thrown;
    },
  },
];

function toolFor(testCase: Case, readOnly: boolean, counter: ExecutionCounter): ToolDefinition {
  return defineTool({
    name: readOnly ? 'peek' : 'post',
    description: readOnly ? 'read-only' : 'a side effect',
    inputSchema: { type: 'object' },
    readOnly,
    run: (_input, ctx) => {
      counter.record(ctx.toolUseId, ctx.idempotencyKey);
      return testCase.act();
    },
  });
}

function setup(testCase: Case, readOnly: boolean) {
  const counter = new ExecutionCounter();
  const store = new FileStore(path.join(tempDir(), '.durable-agent'));
  const name = readOnly ? 'peek' : 'post';
  const parts = () => ({
    store,
    model: scriptedModel([toolUseReply([{ id: 'call_1', name, input: {} }]), endTurnReply('went on')]),
    tools: [toolFor(testCase, readOnly, counter)],
  });
  return { counter, store, parts };
}

async function settledOutcome(store: FileStore) {
  const view = foldJournal(store.location, await store.load());
  return { view, entry: view.ledger.get('call_1'), block: toolResultOf(view.context.messages, 'call_1') };
}

describe.each([
  ['a read-only tool', true],
  ['a side-effecting tool', false],
] as const)('%s whose result cannot be recorded', (_label, readOnly) => {
  describe.each(CASES)('$name', (testCase) => {
    it('is recorded as having run, the model is told why, and the run goes on', async () => {
      const { counter, store, parts } = setup(testCase, readOnly);
      const result = await startRun({ ...parts(), task: 't' });
      expect(result).toMatchObject({ status: 'done', text: 'went on' });
      expect(counter.of('call_1')).toBe(1);
      const { view, entry, block } = await settledOutcome(store);
      expect(entry).toMatchObject({ kind: testCase.kind, is_error: true });
      expect(String(entry!.content)).toMatch(testCase.says);
      expect(block).toMatchObject({ is_error: true, content: entry!.content });
      expect(toolUseProblems(view.context.messages)).toEqual([]);
    });

    it('crashed after its ledger write: the resume reuses the entry and does not run it again', async () => {
      const { counter, store, parts } = setup(testCase, readOnly);
      await expect(startRun({ ...parts(), task: 't', crashAfter: 'after-effect-write:1' })).rejects.toThrow(SimulatedCrash);
      store.close();
      const events: RunEvent[] = [];
      const result = await resumeRun({ ...parts(), observer: (event) => events.push(event) });
      expect(result.status).toBe('done');
      expect(counter.of('call_1')).toBe(1);
      expect(events.filter((e) => e.type === 'reconciled').map((e) => (e as { decision: string }).decision)).toEqual(['reused']);
      expect(String((await settledOutcome(store)).entry!.content)).toMatch(testCase.says);
    });

    it('crashed after it returned, before its ledger write: the resume settles it without wedging', async () => {
      const { counter, store, parts } = setup(testCase, readOnly);
      await expect(startRun({ ...parts(), task: 't', crashAfter: 'after-tool-return:1' })).rejects.toThrow(SimulatedCrash);
      store.close();
      const result = await resumeRun(parts());
      expect(result.status).toBe('done');
      const { entry } = await settledOutcome(store);
      if (readOnly) {
        // Run again, as read-only calls are, and recorded this time.
        expect(counter.of('call_1')).toBe(2);
        expect(String(entry!.content)).toMatch(testCase.says);
      } else {
        // Never run twice: its state is reported as unknown.
        expect(counter.of('call_1')).toBe(1);
        expect(entry).toMatchObject({ kind: 'unknown', is_error: true });
      }
    });
  });
});

describe('what the ledger can hold', () => {
  it('keeps text, JSON and content blocks as they were, and says why the rest cannot be recorded', () => {
    expect(recordableContent('plain')).toEqual({ content: 'plain' });
    expect(recordableContent({ a: 1 })).toEqual({ content: '{\n  "a": 1\n}' });
    expect(recordableContent([{ type: 'text', text: 'hi', dropped: undefined }])).toEqual({ content: [{ type: 'text', text: 'hi' }] });
    expect(recordableContent(() => 1)).toEqual({ unrecordable: 'it returned a function, which has no JSON form' });
    expect(recordableContent({ toJSON: () => { throw new Error('no JSON today'); } })).toEqual({
      unrecordable: 'turning it into JSON failed: no JSON today',
    });
  });

  it('describes anything thrown without throwing itself', () => {
    expect(describeThrown(new Error('boom'))).toBe('boom');
    expect(describeThrown('a string')).toBe('a string');
    expect(describeThrown(Symbol('sym'))).toBe('it threw Symbol(sym)');
    expect(describeThrown(undefined)).toBe('it threw undefined');
    const hostile = new Proxy({}, { getPrototypeOf: () => { throw new Error('trap'); } });
    expect(describeThrown(hostile)).toBe('it threw a value that cannot be described');
  });
});

describe('a record the store cannot encode after a tool ran', () => {
  it('is recorded as "it ran, its result is lost" instead, and the run goes on', async () => {
    const counter = new ExecutionCounter();
    // A store that finds the first ledger write unencodable, as a value JSON cannot hold would be.
    class PickyStore extends FileStore {
      refused = 0;
      override async append(record: JournalRecord, options?: AppendOptions) {
        if (record.event === 'TOOL_RESULT' && this.refused++ === 0) throw new RecordEncodeError('Do not know how to serialize a BigInt');
        return super.append(record, options);
      }
    }
    const store = new PickyStore(path.join(tempDir(), '.durable-agent'));
    const tool = defineTool({
      name: 'post',
      description: 'a side effect',
      inputSchema: { type: 'object' },
      readOnly: false,
      run: (_input, ctx) => {
        counter.record(ctx.toolUseId, ctx.idempotencyKey);
        return 'posted';
      },
    });
    const model = scriptedModel([toolUseReply([{ id: 'call_1', name: 'post', input: {} }]), endTurnReply('went on')]);
    const result = await startRun({ store, model, tools: [tool], task: 't' });
    expect(result.status).toBe('done');
    expect(counter.of('call_1')).toBe(1);
    const { entry } = await settledOutcome(store);
    expect(entry).toMatchObject({ kind: 'ran', is_error: true });
    expect(String(entry!.content)).toContain('post ran, but its result could not be recorded: Do not know how to serialize a BigInt');
  });
});
