/**
 * The reconcile rules beyond read-only and verify: an idempotent tool (any tool, not only MCP)
 * is run again on a ledger miss; a call left open to a tool whose contract changed since the
 * start (input schema, annotations) is never run with the new contract, even when the change
 * is allowed; and each decision records the rule that made it.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { RunOriginMismatchError } from '../../src/runtime/run-origin.ts';
import { readRunHistory, readRunStatus } from '../../src/runtime/run-status.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { defineTool, type ToolDefinition } from '../../src/tools/tool.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

function setFlag(runs: string[], traits: { idempotent?: boolean; schema?: Record<string, unknown> } = {}): ToolDefinition {
  return defineTool<{ flag: string }>({
    name: 'set_flag',
    description: 'Set a flag (setting it twice changes nothing more).',
    inputSchema: traits.schema ?? { type: 'object', properties: { flag: { type: 'string' } }, required: ['flag'] },
    readOnly: false,
    idempotent: traits.idempotent ?? true,
    run: ({ flag }, ctx) => {
      runs.push(ctx.toolUseId);
      return `${flag} set`;
    },
  });
}

const SCRIPT = [toolUseReply([{ id: 'toolu_1', name: 'set_flag', input: { flag: 'x' } }]), endTurnReply('done')];

async function crashed(tool: ToolDefinition, crashAfter: string): Promise<string> {
  const dir = path.join(tempDir(), '.durable-agent');
  await expect(startRun({ store: new FileStore(dir), model: scriptedModel(SCRIPT), tools: [tool], task: 't', crashAfter })).rejects.toThrow(SimulatedCrash);
  return dir;
}

function resumeWith(dir: string, tools: ToolDefinition[], allowToolChange = false) {
  const events: RunEvent[] = [];
  const result = resumeRun({ store: new FileStore(dir), model: scriptedModel(SCRIPT), tools, observer: (e) => events.push(e), allowToolChange });
  return { result, events };
}

describe('an idempotent tool on a ledger miss', () => {
  it.each(['after-save-a:1', 'after-tool-return:1'])('%s: is run again, and the decision says the idempotent rule decided', async (label) => {
    const runs: string[] = [];
    const dir = await crashed(setFlag(runs), label);
    const { result, events } = resumeWith(dir, [setFlag(runs)]);
    expect((await result).status).toBe('done');
    expect(runs).toEqual(label === 'after-save-a:1' ? ['toolu_1'] : ['toolu_1', 'toolu_1']);
    expect(events.find((e) => e.type === 'reconciled')).toMatchObject({ decision: 're-ran-idempotent', rule: 'idempotent', basis: null });
    const noted = (await readRunHistory(new FileStore(dir))).flatMap((step) => (step.note?.reconcile ? [step.note.reconcile] : []));
    expect(noted).toEqual([{ tool_use_id: 'toolu_1', name: 'set_flag', decision: 're-ran-idempotent', rule: 'idempotent' }]);
    expect((await readRunStatus(new FileStore(dir))).reconciled).toEqual(noted);
  });

  it('a side-effecting tool that is not idempotent is still reported unknown (rule no-verify)', async () => {
    const runs: string[] = [];
    const dir = await crashed(setFlag(runs, { idempotent: false }), 'after-save-a:1');
    const { result, events } = resumeWith(dir, [setFlag(runs, { idempotent: false })]);
    expect((await result).status).toBe('done');
    expect(runs).toEqual([]);
    expect(events.find((e) => e.type === 'reconciled')).toMatchObject({ decision: 'unknown-reported', rule: 'no-verify' });
  });
});

describe('a call left open to a tool whose contract changed', () => {
  it('is refused without allowToolChange when only the annotations changed, naming them', async () => {
    const runs: string[] = [];
    const dir = await crashed(setFlag(runs, { idempotent: false }), 'after-save-a:1');
    const error = await resumeWith(dir, [setFlag(runs, { idempotent: true })]).result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunOriginMismatchError);
    expect((error as Error).message).toContain('the annotations of tool set_flag changed (side effect then, idempotent now)');
  });

  it('with allowToolChange: not run with the new contract; its state is reported unknown (rule tool-changed)', async () => {
    const runs: string[] = [];
    const dir = await crashed(setFlag(runs), 'after-save-a:1');
    const changed = setFlag(runs, { schema: { type: 'object', properties: { flag: { type: 'string' }, scope: { type: 'string' } } } });
    const { result, events } = resumeWith(dir, [changed], true);
    expect((await result).status).toBe('done');
    expect(runs).toEqual([]);
    const reconciled = events.find((e) => e.type === 'reconciled');
    expect(reconciled).toMatchObject({ decision: 'unknown-reported', rule: 'tool-changed' });
    expect(reconciled && 'detail' in reconciled ? reconciled.detail : '').toContain('the input schema of tool set_flag changed');
  });

  it('with allowToolChange, a changed tool that can verify is not asked either', async () => {
    const first = countingTools();
    const dir = path.join(tempDir(), '.durable-agent');
    const script = [toolUseReply([{ id: 'toolu_2', name: 'charge_card', input: { amount: 5 } }]), endTurnReply('done')];
    await expect(
      startRun({ store: new FileStore(dir), model: scriptedModel(script), tools: first.tools, task: 't', crashAfter: 'after-save-a:1' }),
    ).rejects.toThrow(SimulatedCrash);
    const again = countingTools();
    const tools = again.tools.map((tool) => (tool.name === 'charge_card' ? defineTool({ ...tool, inputSchema: { type: 'object', properties: { amount: { type: 'string' } } } }) : tool));
    const events: RunEvent[] = [];
    const result = await resumeRun({ store: new FileStore(dir), model: scriptedModel(script), tools, observer: (e) => events.push(e), allowToolChange: true });
    expect(result.status).toBe('done');
    expect(again.counter.of('toolu_2')).toBe(0);
    expect(events.find((e) => e.type === 'reconciled')).toMatchObject({ decision: 'unknown-reported', rule: 'tool-changed' });
  });
});
