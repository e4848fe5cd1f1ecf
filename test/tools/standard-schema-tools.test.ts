/**
 * Tools whose input schema is a Standard Schema (zod 4 here), in runs driven by the scripted
 * model: the model is sent the JSON Schema zod makes, the run pins its hash, input zod refuses is
 * rejected as a JSON Schema tool's is, run() / verify() / needsApproval get zod's output, an
 * edited input is checked by zod too, and a crashed run resumes with the tool defined anew.
 * Then verify() answering with run()'s own kind of value, which the model reads as run()'s.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Message, ModelReply } from '../../machines/agent-loop.types.ts';
import { decide, pendingDecisions } from '../../src/awaits/decide.ts';
import { DecisionRefusedError } from '../../src/awaits/decision-errors.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import type { Model, ModelRequest } from '../../src/model/model.ts';
import { endTurnReply, scriptedModel, type ScriptedStep, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import type { RunStore } from '../../src/store/store.ts';
import { executeCall, verifyCall } from '../../src/tools/execute-call.ts';
import { schemaHash } from '../../src/tools/schema-hash.ts';
import { ToolInputSchemaError } from '../../src/tools/standard-input.ts';
import { defineTool, type StandardSchemaV1, type ToolDefinition } from '../../src/tools/tool.ts';
import { ToolRegistry } from '../../src/tools/tool-registry.ts';
import { DurableAgentError } from '../../src/util/durable-agent-error.ts';
import { toolResultOf, toolUseProblems } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const newStore = () => new FileStore(path.join(tempDir(), '.durable-agent'));

/** Built anew for every definition, as a resumed process builds it. */
const weatherSchema = () => z.object({ city: z.string().trim().min(1), units: z.enum(['c', 'f']).default('c') });

function weatherTool(seen: unknown[], extra: Partial<Pick<ToolDefinition, 'needsApproval'>> = {}) {
  return defineTool({
    name: 'weather',
    description: 'The weather in a city.',
    inputSchema: weatherSchema(),
    readOnly: true,
    ...extra,
    run: (input) => {
      seen.push(input);
      // Typed by zod's output: the default makes units a member, not an optional one.
      const units: 'c' | 'f' = input.units;
      // @ts-expect-error the input has no country: inference gives the schema's type, not any
      void input.country;
      return `${input.city}: 21°${units.toUpperCase()}`;
    },
  });
}

/** The scripted model, keeping every request it is sent. */
function capturing(steps: ScriptedStep[]): { model: Model; requests: ModelRequest[] } {
  const inner = scriptedModel(steps);
  const requests: ModelRequest[] = [];
  return {
    requests,
    model: {
      name: 'scripted',
      createMessage(request: ModelRequest): Promise<ModelReply> {
        requests.push(request);
        return inner.createMessage(request);
      },
    },
  };
}

const oneCall = (name: string, input: unknown): ScriptedStep[] => [toolUseReply([{ id: 'c1', name, input }]), endTurnReply('finished')];

async function viewOf(store: RunStore) {
  const loaded = await store.load();
  return { header: loaded.header, view: foldJournal(store.location, loaded) };
}

async function messagesOf(store: RunStore): Promise<Message[]> {
  return (await viewOf(store)).view.context.messages;
}

const reconciled = (events: RunEvent[]) => events.flatMap((e) => (e.type === 'reconciled' ? [`${e.call.id}:${e.decision}`] : []));

describe('a tool whose input schema is a zod 4 schema', () => {
  it("sends the model the JSON Schema zod makes of the schema's input, and the run pins that schema's hash", async () => {
    const store = newStore();
    const { model, requests } = capturing(oneCall('weather', { city: 'Oslo' }));
    const tool = weatherTool([]);
    await startRun({ store, model, tools: [tool], task: 'weather' });

    const sent = requests[0]!.tools;
    expect(sent).toEqual([{ name: 'weather', description: 'The weather in a city.', input_schema: weatherSchema()['~standard'].jsonSchema.input({ target: 'draft-2020-12' }) }]);
    expect(sent[0]!.input_schema).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { city: { type: 'string', minLength: 1 }, units: { type: 'string', enum: ['c', 'f'], default: 'c' } },
      required: ['city'],
    });
    expect(tool.inputSchema).toEqual(sent[0]!.input_schema);
    const { header } = await viewOf(store);
    expect(header.startedBy!.toolSchemas).toEqual({ weather: schemaHash(sent[0]!.input_schema) });
  });

  it('refuses input zod refuses as a JSON Schema tool refuses input: rejected, an is_error result, the tool not run, the run going on', async () => {
    const seen: unknown[] = [];
    const store = newStore();
    const result = await startRun({ store, model: scriptedModel(oneCall('weather', { city: '   ', units: 'k' })), tools: [weatherTool(seen)], task: 'weather' });
    expect(result).toMatchObject({ status: 'done', text: 'finished' });
    expect(seen).toEqual([]);
    const { view } = await viewOf(store);
    expect(view.ledger.get('c1')).toMatchObject({ kind: 'rejected', is_error: true });
    const block = toolResultOf(view.context.messages, 'c1')!;
    expect(block.is_error).toBe(true);
    expect(block.content).toMatch(/^Invalid input for weather: \/city: Too small: .+; \/units: Invalid option: .+\. The tool was not run; call it again with input that matches its schema\.$/);

    // The same sentence around the problem as a JSON Schema tool's, whose problem ajv words.
    const json = defineTool({ name: 'weather', description: 'd', inputSchema: { type: 'object', properties: { city: { type: 'string' } } }, readOnly: true, run: () => 'ran' });
    const jsonStore = new MemoryStore();
    await startRun({ store: jsonStore, model: scriptedModel(oneCall('weather', { city: 5 })), tools: [json], task: 'weather' });
    expect(toolResultOf(await messagesOf(jsonStore), 'c1')).toMatchObject({ is_error: true, content: 'Invalid input for weather: /city must be string. The tool was not run; call it again with input that matches its schema.' });
  });

  it("runs with zod's output (the default applied, the string trimmed) while the journal keeps the input as the model sent it", async () => {
    const seen: unknown[] = [];
    const store = newStore();
    await startRun({ store, model: scriptedModel(oneCall('weather', { city: '  Oslo ' })), tools: [weatherTool(seen)], task: 'weather' });
    expect(seen).toEqual([{ city: 'Oslo', units: 'c' }]);
    const messages = await messagesOf(store);
    expect(toolUseProblems(messages)).toEqual([]);
    expect(toolResultOf(messages, 'c1')).toEqual({ type: 'tool_result', tool_use_id: 'c1', content: 'Oslo: 21°C' });
    expect(messages[1]!.content).toEqual([{ type: 'tool_use', id: 'c1', name: 'weather', input: { city: '  Oslo ' } }]);
  });

  it('survives a crash: the resume defines the tool anew, its pinned schema hash matches, and the call runs again with the output', async () => {
    const store = newStore();
    const before: unknown[] = [];
    await expect(startRun({ store, model: scriptedModel(oneCall('weather', { city: 'Oslo' })), tools: [weatherTool(before)], task: 'weather', crashAfter: 'after-save-a:1' })).rejects.toThrow(SimulatedCrash);
    expect(before).toEqual([]);

    const after: unknown[] = [];
    const again = weatherTool(after);
    const { header } = await viewOf(store);
    expect(header.startedBy!.toolSchemas.weather).toBe(schemaHash(again.inputSchema));
    const events: RunEvent[] = [];
    const result = await resumeRun({ store: new FileStore(store.dir), model: scriptedModel(oneCall('weather', { city: 'Oslo' })), tools: [again], observer: (e) => events.push(e) });
    expect(result).toMatchObject({ status: 'done', text: 'finished' });
    expect(reconciled(events)).toEqual(['c1:re-ran-read-only']);
    expect(after).toEqual([{ city: 'Oslo', units: 'c' }]);
    expect(toolResultOf(await messagesOf(store), 'c1')).toMatchObject({ content: 'Oslo: 21°C' });
  });

  it("a side effect crashed before its result was recorded: verify() gets zod's output, and its object result reads as run()'s did", async () => {
    const receipt = { id: 'ch_1', amount: 5, currency: 'EUR', lines: ['one', 'two'] };
    const charged = new Set<string>();
    const verifiedWith: unknown[] = [];
    const chargeTool = () =>
      defineTool({
        name: 'charge',
        description: 'Charge an amount.',
        inputSchema: z.object({ amount: z.number().positive(), currency: z.string().default('EUR') }),
        readOnly: false,
        run: ({ amount, currency }, ctx) => {
          charged.add(ctx.idempotencyKey);
          return { ...receipt, amount, currency };
        },
        verify: (input, ctx) => {
          verifiedWith.push(input);
          return charged.has(ctx.idempotencyKey) ? { happened: true, result: { ...receipt, amount: input.amount, currency: input.currency } } : { happened: false };
        },
      });
    const ran = new MemoryStore();
    await startRun({ store: ran, model: scriptedModel(oneCall('charge', { amount: 5 })), tools: [chargeTool()], task: 'charge' });
    const asRun = toolResultOf(await messagesOf(ran), 'c1')!;
    expect(asRun.content).toBe(JSON.stringify(receipt, null, 2));

    const store = newStore();
    await expect(startRun({ store, model: scriptedModel(oneCall('charge', { amount: 5 })), tools: [chargeTool()], task: 'charge', crashAfter: 'after-tool-return:1' })).rejects.toThrow(SimulatedCrash);
    const events: RunEvent[] = [];
    await resumeRun({ store: new FileStore(store.dir), model: scriptedModel(oneCall('charge', { amount: 5 })), tools: [chargeTool()], observer: (e) => events.push(e) });
    expect(reconciled(events)).toEqual(['c1:verified-done']);
    expect(verifiedWith).toEqual([{ amount: 5, currency: 'EUR' }]);
    const { view } = await viewOf(store);
    expect(view.ledger.get('c1')).toMatchObject({ kind: 'verified', is_error: false });
    expect(toolResultOf(view.context.messages, 'c1')).toEqual(asRun);
  });

  it('checks an edited input with zod too: decide() refuses what zod refuses, and the call runs with the output of what it accepts', async () => {
    const seen: unknown[] = [];
    const store = newStore();
    const tools = [weatherTool(seen)];
    const parts = { tools, requireApproval: ['weather'], wait: false };
    expect((await startRun({ ...parts, store, model: scriptedModel(oneCall('weather', { city: 'Oslo' })), task: 'weather' })).status).toBe('waiting');

    const refused = await decide(store, { tool_use_id: 'c1', verdict: 'approved', input: { city: '  ' } }, { tools }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DecisionRefusedError);
    expect(refused).toMatchObject({ reason: 'invalid-input' });
    expect((refused as Error).message).toMatch(/^The edited input does not fit the input schema of weather: \/city: Too small: /);
    expect((await pendingDecisions(store))[0]!.given).toBeNull();

    await decide(store, { tool_use_id: 'c1', verdict: 'approved', input: { city: ' Bergen', units: 'f' } }, { tools });
    const result = await resumeRun({ ...parts, store: new FileStore(store.dir), model: scriptedModel(oneCall('weather', { city: 'Oslo' })) });
    expect(result.status).toBe('done');
    expect(seen).toEqual([{ city: 'Bergen', units: 'f' }]);
    expect(String(toolResultOf(await messagesOf(store), 'c1')!.content)).toMatch(/it ran with \{"city":" Bergen","units":"f"\}\.\n\nBergen: 21°F$/);
  });

  it("asks needsApproval with zod's output; input zod refuses needs no approval, as it is not run", async () => {
    const asked: unknown[] = [];
    const tool = weatherTool([], {
      needsApproval: (input: z.output<ReturnType<typeof weatherSchema>>) => {
        asked.push(input);
        return input.units === 'f';
      },
    });
    const store = new MemoryStore();
    const calls = [
      { id: 'a', name: 'weather', input: { city: 'Oslo' } },
      { id: 'b', name: 'weather', input: { city: 'Miami', units: 'f' } },
      { id: 'c', name: 'weather', input: { city: 7 } },
    ];
    const result = await startRun({ store, model: scriptedModel([toolUseReply(calls), endTurnReply('done')]), tools: [tool], task: 'weather', wait: false });
    expect(result.status).toBe('waiting');
    expect(asked).toEqual([
      { city: 'Oslo', units: 'c' },
      { city: 'Miami', units: 'f' },
    ]);
    expect((await viewOf(store)).view.context.pending.map((call) => [call.id, call.needs ?? null])).toEqual([
      ['a', null],
      ['b', 'approval'],
      ['c', null],
    ]);
  });

  it('validates with a schema whose checks are asynchronous (its validate() returns a promise)', async () => {
    const seen: unknown[] = [];
    const tool = defineTool({
      name: 'visit',
      description: 'Visit a city.',
      inputSchema: z.object({ city: z.string() }).refine(async ({ city }) => city !== 'Atlantis', { message: 'no such city' }),
      readOnly: true,
      run: ({ city }) => (seen.push(city), `visited ${city}`),
    });
    const registry = new ToolRegistry([tool]);
    const refused = await executeCall(registry, 'run-1', { id: 'c1', name: 'visit', input: { city: 'Atlantis' } });
    expect(refused).toMatchObject({ kind: 'rejected', is_error: true, content: 'Invalid input for visit: input: no such city. The tool was not run; call it again with input that matches its schema.' });
    expect(await executeCall(registry, 'run-1', { id: 'c2', name: 'visit', input: { city: 'Rome' } })).toMatchObject({ kind: 'ran', content: 'visited Rome' });
    expect(seen).toEqual(['Rome']);
  });

  it('a validate() that throws rejects the call, with what it threw; verify() is not asked about input the schema refuses', async () => {
    const asked: unknown[] = [];
    const tool = defineTool({
      name: 'check',
      description: 'd',
      inputSchema: z.object({ n: z.number() }).refine(({ n }) => {
        if (n < 0) throw new Error('the lookup table is gone');
        return true;
      }),
      readOnly: false,
      run: ({ n }) => n,
      verify: (input) => (asked.push(input), { happened: true }),
    });
    const registry = new ToolRegistry([tool]);
    expect(await executeCall(registry, 'run-1', { id: 'c1', name: 'check', input: { n: -1 } })).toMatchObject({
      kind: 'rejected',
      is_error: true,
      content: "Invalid input for check: its schema's validate() failed: the lookup table is gone. The tool was not run; call it again with input that matches its schema.",
    });
    expect(await verifyCall(registry, 'run-1', { id: 'c2', name: 'check', input: { n: 'one' } })).toEqual({
      cannotTell: expect.stringMatching(/^its input does not fit the tool's input schema now \(\/n: Invalid input: expected number, received string\), so verify\(\) was not asked$/),
    });
    expect(await verifyCall(registry, 'run-1', { id: 'c3', name: 'check', input: { n: 2 } })).toEqual({ answer: { happened: true } });
    expect(asked).toEqual([{ n: 2 }]);
  });

  it('keeps its validator when the definition is copied with its schema, and gives it up with its schema', async () => {
    const seen: unknown[] = [];
    const tool = weatherTool(seen);
    await executeCall(new ToolRegistry([{ ...tool }]), 'run-1', { id: 'c1', name: 'weather', input: { city: ' Oslo' } });
    expect(seen).toEqual([{ city: 'Oslo', units: 'c' }]);

    const plain = defineTool({ ...tool, inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } });
    await executeCall(new ToolRegistry([plain]), 'run-1', { id: 'c2', name: 'weather', input: { city: ' Oslo' } });
    expect(seen[1]).toEqual({ city: ' Oslo' });
  });
});

describe('defineTool with a Standard Schema that cannot give a JSON Schema', () => {
  /** A Standard Schema written by hand: it validates, and offers no JSON Schema. */
  const evenNumber: StandardSchemaV1<{ n: number }> = {
    '~standard': {
      version: 1,
      vendor: 'hand-made',
      validate: (value) => {
        const n = (value as { n?: unknown } | null)?.n;
        return typeof n === 'number' && n % 2 === 0 ? { value: { n } } : { issues: [{ message: 'must be an even number', path: [{ key: 'n' }] }] };
      },
    },
  };

  it('is refused when the definition gives no jsonSchema either: a refused ToolInputSchemaError that says what to give', () => {
    const error = (() => {
      try {
        defineTool({ name: 'even', description: 'd', inputSchema: evenNumber, readOnly: true, run: ({ n }) => n / 2 });
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(ToolInputSchemaError);
    expect(error).toBeInstanceOf(DurableAgentError);
    expect(error).toMatchObject({ name: 'ToolInputSchemaError', kind: 'refused', toolName: 'even', vendor: 'hand-made', reason: 'no-json-schema', problem: null });
    expect((error as Error).message).toMatch(/^The input schema of tool "even" \(a hand-made schema\) offers no JSON Schema .*give the definition its input's JSON Schema as `jsonSchema`/);
  });

  it('takes the jsonSchema the definition gives, and validates with the schema itself', async () => {
    const jsonSchema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    const tool = defineTool({ name: 'even', description: 'd', inputSchema: evenNumber, jsonSchema, readOnly: true, run: ({ n }) => n / 2 });
    expect(tool.inputSchema).toEqual(jsonSchema);
    expect('jsonSchema' in tool).toBe(false);
    const registry = new ToolRegistry([tool]);
    expect(registry.specs[0]!.input_schema).toEqual(jsonSchema);
    expect(await executeCall(registry, 'run-1', { id: 'c1', name: 'even', input: { n: 3 } })).toMatchObject({ kind: 'rejected', content: 'Invalid input for even: /n: must be an even number. The tool was not run; call it again with input that matches its schema.' });
    expect(await executeCall(registry, 'run-1', { id: 'c2', name: 'even', input: { n: 4 } })).toMatchObject({ kind: 'ran', content: '2' });
  });

  it("is refused when the library cannot convert the schema, with the library's reason", () => {
    const define = () => defineTool({ name: 'remind', description: 'd', inputSchema: z.object({ when: z.date() }), readOnly: false, run: ({ when }) => when.toISOString() });
    expect(define).toThrow(ToolInputSchemaError);
    expect(define).toThrow(/^The input schema of tool "remind" \(a zod schema\) could not be converted to JSON Schema: Date cannot be represented in JSON Schema\./);
  });

  it('leaves a JSON Schema definition as it was given', () => {
    const definition = { name: 'plain', description: 'd', inputSchema: { type: 'object' }, readOnly: true, run: () => 'ok' };
    expect(defineTool(definition)).toBe(definition);
  });
});

describe("verify() answering with run()'s kind of value", () => {
  const receipt = { id: 'ch_9', amount: 12, items: [{ sku: 'a', qty: 2 }] };

  function receiptTool(charged: Set<string>): ToolDefinition<{ amount: number }> {
    return defineTool<{ amount: number }>({
      name: 'charge_card',
      description: 'Charge a card.',
      inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
      readOnly: false,
      run: (_input, ctx) => {
        charged.add(ctx.idempotencyKey);
        return receipt;
      },
      verify: (_input, ctx) => (charged.has(ctx.idempotencyKey) ? { happened: true, result: receipt } : { happened: false }),
    });
  }

  it('an object: the model reads the verified call exactly as it reads the call run', async () => {
    const ran = new MemoryStore();
    await startRun({ store: ran, model: scriptedModel(oneCall('charge_card', { amount: 12 })), tools: [receiptTool(new Set())], task: 'charge' });
    const asRun = toolResultOf(await messagesOf(ran), 'c1')!;

    const charged = new Set<string>();
    const store = newStore();
    await expect(startRun({ store, model: scriptedModel(oneCall('charge_card', { amount: 12 })), tools: [receiptTool(charged)], task: 'charge', crashAfter: 'after-tool-return:1' })).rejects.toThrow(SimulatedCrash);
    const events: RunEvent[] = [];
    await resumeRun({ store: new FileStore(store.dir), model: scriptedModel(oneCall('charge_card', { amount: 12 })), tools: [receiptTool(charged)], observer: (e) => events.push(e) });
    expect(reconciled(events)).toEqual(['c1:verified-done']);
    const verified = toolResultOf(await messagesOf(store), 'c1')!;
    expect(verified).toEqual(asRun);
    expect(verified).toEqual({ type: 'tool_result', tool_use_id: 'c1', content: JSON.stringify(receipt, null, 2) });
  });
});
