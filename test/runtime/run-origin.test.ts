/**
 * A run's journal header records what started it (command, model, tools and their input
 * schemas); a resume by another command or with other tools is refused with nothing changed,
 * unless allowToolChange says the change is intended. A changed model is allowed, and said.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { checkOrigin, RunOriginMismatchError } from '../../src/runtime/run-origin.ts';
import { schemaHash } from '../../src/tools/schema-hash.ts';
import { FileStore, JOURNAL_FILE } from '../../src/store/file-store.ts';
import { frameCommitMark, frameLine } from '../../src/store/journal/framing.ts';
import { defineTool, type ToolDefinition } from '../../src/tools/tool.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const SCRIPT = [
  toolUseReply([{ id: 'toolu_1', name: 'lookup', input: { q: 'a' } }]),
  toolUseReply([{ id: 'toolu_2', name: 'charge_card', input: { amount: 5 } }]),
  endTurnReply('done'),
];

/** A run started by `command` with the counting tools, crashed right after checkpoint A of its second call. */
async function crashedRun(command?: string): Promise<{ dir: string; journal: string }> {
  const dir = path.join(tempDir(), '.durable-agent');
  const tools = countingTools().tools;
  await expect(
    startRun({ store: new FileStore(dir), model: scriptedModel(SCRIPT, { name: 'model-one' }), tools, task: 'charge', crashAfter: 'after-save-a:2', ...(command ? { command } : {}) }),
  ).rejects.toThrow(SimulatedCrash);
  return { dir, journal: path.join(dir, JOURNAL_FILE) };
}

function resume(dir: string, tools: ToolDefinition[], options: { command?: string; allowToolChange?: boolean; model?: string } = {}) {
  const events: RunEvent[] = [];
  const { model = 'model-one', ...rest } = options;
  const result = resumeRun({ store: new FileStore(dir), model: scriptedModel(SCRIPT, { name: model }), tools, observer: (e) => events.push(e), ...rest });
  return { result, events };
}

function headerOf(journal: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(journal, 'utf8').split('\n')[0]!.slice(9));
}

describe('what started a run', () => {
  it('is recorded in the journal header: command, model, tool names and input schema hashes', async () => {
    const { journal } = await crashedRun('demo');
    const tools = countingTools().tools;
    expect(headerOf(journal).startedBy).toEqual({
      command: 'demo',
      model: 'model-one',
      tools: tools.map((t) => t.name),
      toolSchemas: Object.fromEntries(tools.map((t) => [t.name, schemaHash(t.inputSchema)])),
      toolAnnotations: Object.fromEntries(tools.map((t) => [t.name, { readOnly: t.readOnly, idempotent: false }])),
    });
    // A program that does not say: 'api'.
    expect(headerOf((await crashedRun()).journal)).toMatchObject({ startedBy: { command: 'api' } });
  });

  it('a schema hash does not depend on key order, and changes with the contract', () => {
    expect(schemaHash({ type: 'object', properties: { a: { type: 'string' } } })).toBe(schemaHash({ properties: { a: { type: 'string' } }, type: 'object' }));
    expect(schemaHash({ type: 'object', properties: { a: { type: 'string' } } })).not.toBe(schemaHash({ type: 'object', properties: { a: { type: 'number' } } }));
  });
});

describe('a resume that differs from what started the run', () => {
  it('is refused for another command, naming both and the way on, with nothing changed (a torn tail stays put)', async () => {
    const { dir, journal } = await crashedRun('run');
    fs.appendFileSync(journal, '0badc0de {"seq":9'); // a torn tail: a repairing load would cut it off
    const before = fs.readFileSync(journal);
    const entriesBefore = fs.readdirSync(dir).sort();
    const tools = countingTools();
    const { result, events } = resume(dir, tools.tools, { command: 'demo' });
    const error = await result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunOriginMismatchError);
    expect(error).toMatchObject({ startedBy: { command: 'run' }, offered: { command: 'demo' } });
    const message = (error as Error).message;
    expect(message).toContain('was started by `durable-agent run`');
    expect(message).toContain('this resume is `durable-agent demo`');
    expect(message).toContain('`durable-agent run --resume --model model-one`');
    expect(message).toContain('--allow-tool-change');
    expect(message).toContain('nothing was changed');
    expect(events).toEqual([]);
    expect(fs.readFileSync(journal)).toEqual(before);
    expect(fs.readdirSync(dir).sort()).toEqual(entriesBefore.filter((name) => name !== 'lock'));
    expect(tools.counter.runs.size).toBe(0);

    // The cause fixed (the right command): the resume goes on.
    const right = resume(dir, tools.tools, { command: 'run' });
    expect((await right.result).status).toBe('done');
    expect(right.events.find((e) => e.type === 'resumed')).toMatchObject({ acceptedChanges: [] });
  });

  it('is refused from the header alone: the records are not read (a record damaged after it does not change the answer)', async () => {
    const { dir, journal } = await crashedRun('run');
    // The first record's checksum broken, in place: any read of the records would refuse the journal as damaged.
    const text = fs.readFileSync(journal, 'utf8');
    const firstRecord = text.indexOf('\n', text.indexOf('\n') + 1) + 1;
    fs.writeFileSync(journal, `${text.slice(0, firstRecord)}00000000${text.slice(firstRecord + 8)}`);
    const before = fs.readFileSync(journal);
    const error = await resume(dir, countingTools().tools, { command: 'demo' }).result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunOriginMismatchError);
    expect(fs.readFileSync(journal)).toEqual(before);
  });

  it('is refused for a tool gone, a tool added or a changed input schema', async () => {
    const base = countingTools().tools;
    const changedSchema = base.map((tool) =>
      tool.name === 'charge_card' ? defineTool({ ...tool, inputSchema: { type: 'object', properties: { amount: { type: 'string' } } } }) : tool,
    );
    const extra = defineTool({ name: 'refund', description: 'Refund.', inputSchema: { type: 'object' }, readOnly: false, run: () => 'ok' });
    const cases: Array<[string, ToolDefinition[], string]> = [
      ['gone', base.filter((t) => t.name !== 'explode'), 'tool explode is not offered now'],
      ['added', [...base, extra], 'tool refund is new'],
      ['schema', changedSchema, 'the input schema of tool charge_card changed'],
    ];
    for (const [what, tools, words] of cases) {
      const { dir, journal } = await crashedRun();
      const before = fs.readFileSync(journal);
      const error = await resume(dir, tools).result.catch((e: unknown) => e);
      expect(error, what).toBeInstanceOf(RunOriginMismatchError);
      expect((error as Error).message).toContain(words);
      expect(fs.readFileSync(journal)).toEqual(before);
    }
  });

  it('goes on when allowToolChange says the change is intended, and says what changed', async () => {
    const { dir } = await crashedRun('run');
    const tools = countingTools();
    const { result, events } = resume(dir, tools.tools, { command: 'demo', allowToolChange: true });
    expect((await result).status).toBe('done');
    expect(events.find((e) => e.type === 'resumed')).toMatchObject({
      startedBy: { command: 'run' },
      acceptedChanges: ['it was started by `durable-agent run`, and this is `durable-agent demo`'],
    });
  });

  it('goes on with another model (switching models mid-run is legitimate), and says so', async () => {
    const { dir } = await crashedRun();
    const { result, events } = resume(dir, countingTools().tools, { model: 'model-two' });
    expect((await result).status).toBe('done');
    expect(events.find((e) => e.type === 'resumed')).toMatchObject({ model: 'model-two', startedBy: { model: 'model-one' }, acceptedChanges: [] });
  });

  it('is not checked for a journal written before the origin was recorded', async () => {
    const { dir, journal } = await crashedRun('run');
    // The same journal with the header of an older release: no startedBy.
    const text = fs.readFileSync(journal);
    const headerEnd = text.indexOf(0x0a) + 1;
    const { startedBy: _dropped, ...older } = headerOf(journal);
    const head = frameLine(older);
    const body = text.subarray(headerEnd + frameCommitMark({ records: 0, bytes: 0 }).length);
    const mark = /@commit (\d{10}) (\d{12})/.exec(text.toString('latin1'))!;
    const records = Number(mark[1]);
    const bytes = Number(mark[2]) - headerEnd + head.length;
    fs.writeFileSync(journal, Buffer.concat([head, frameCommitMark({ records, bytes }), body]));
    const { result, events } = resume(dir, countingTools().tools, { command: 'demo' });
    expect((await result).status).toBe('done');
    expect(events.find((e) => e.type === 'resumed')).toMatchObject({ startedBy: null, acceptedChanges: [] });
  });
});

describe('a resume without the MCP servers the run started with', () => {
  it('names their tools by server, in a message short enough to read: give --mcp-config again', () => {
    const mcp = Array.from({ length: 30 }, (_, n) => `mcp__fs__tool_${n}`);
    const own = ['list_files', 'read_file', 'write_file'];
    const origin = (tools: string[]) => ({ command: 'run', model: 'claude-sonnet-4-5', tools, toolSchemas: Object.fromEntries(tools.map((name) => [name, 'x'])) });
    const header = { format: 'durable-agent/journal', version: 1, runId: 'r', createdAt: 0, startedBy: origin([...own, ...mcp]) } as unknown as Parameters<typeof checkOrigin>[1];
    const error = (() => {
      try {
        checkOrigin('/tmp/run', header, origin(own), false);
        return null;
      } catch (thrown) {
        return thrown as RunOriginMismatchError;
      }
    })();
    expect(error).toBeInstanceOf(RunOriginMismatchError);
    expect(error!.message).toContain('tools 30 tools of MCP server fs (mcp__fs__…) are not offered now');
    expect(error!.message).toContain('tools list_files, read_file, write_file, 30 tools of MCP server fs (mcp__fs__…))');
    expect(error!.message).toContain('and --mcp-config');
    expect(error!.message.length).toBeLessThan(900);
  });
});
