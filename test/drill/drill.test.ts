/**
 * The crash drill of a user's agent (not the demo): three tools — read-only, a side effect with
 * verify(), a side effect without — walked at every crash point of the path, each killed there
 * and resumed with the tools running for real in a scratch folder; the third is reported
 * "unknown state" and the drill passes; a non-idempotent tool declared idempotent is caught
 * running twice and the drill fails; crashTests registers a test per point.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineAgent, defineTool, type ToolDefinition } from '../../src/index.ts';
import { crashTests, drillAgent, drillMarkdown, DrillScriptError, scriptReplies, SideEffectTwiceError } from '../../src/testing.ts';

/** Each tool appends a line per real effect to a file of the scratch folder: what the drill's count() reads. */
let scratchDir = '';
const ledgerOf = (name: string) => path.join(scratchDir, `${name}.log`);
const effectsOf = (name: string, key: string) => (fs.existsSync(ledgerOf(name)) ? fs.readFileSync(ledgerOf(name), 'utf8').split('\n').filter((line) => line === key).length : 0);

function tools(options: { chargeIdempotent?: boolean } = {}): ToolDefinition[] {
  const readBalance = defineTool<{ account: string }>({
    name: 'read_balance',
    description: 'Read an account balance.',
    inputSchema: { type: 'object', properties: { account: { type: 'string' } }, required: ['account'] },
    readOnly: true,
    run: ({ account }) => `${account}: 120 EUR`,
  });
  const sendInvoice = defineTool<{ to: string }>({
    name: 'send_invoice',
    description: 'Send an invoice (checkable: the outbox holds its key).',
    inputSchema: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
    readOnly: false,
    run: ({ to }, ctx) => {
      fs.appendFileSync(ledgerOf('send_invoice'), `${ctx.idempotencyKey}\n`);
      return `invoice sent to ${to}`;
    },
    verify: (_input, ctx) => ({ happened: effectsOf('send_invoice', ctx.idempotencyKey) > 0 }),
  });
  const charge = defineTool<{ amount: number }>({
    name: 'charge_card',
    description: 'Charge a card (no way to check it afterwards).',
    inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
    readOnly: false,
    ...(options.chargeIdempotent ? { idempotent: true } : {}),
    run: ({ amount }, ctx) => {
      fs.appendFileSync(ledgerOf('charge_card'), `${ctx.idempotencyKey}\n`);
      return `charged ${amount}`;
    },
  });
  return [readBalance, sendInvoice, charge];
}

const SCRIPT = [
  { stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_balance', input: { account: 'acme' } }] },
  { stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'toolu_2', name: 'send_invoice', input: { to: 'acme' } }] },
  { stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'toolu_3', name: 'charge_card', input: { amount: 120 } }] },
  { stop_reason: 'end_turn', content: [{ type: 'text', text: 'Invoiced and charged.' }] },
];

const agentOf = (options: { chargeIdempotent?: boolean } = {}) => defineAgent({ name: 'billing', model: 'claude-sonnet-5-5', tools: tools(options) });

const drillOptions = (options: { chargeIdempotent?: boolean } = {}) => ({
  agent: agentOf(options),
  replies: scriptReplies(SCRIPT, 'billing-script.json'),
  source: 'billing-script.json',
  setup: ({ dir }: { dir: string }) => {
    scratchDir = dir;
  },
  count: ({ tool, idempotencyKey }: { tool: string; idempotencyKey: string }) => effectsOf(tool, idempotencyKey),
});

describe('drill', () => {
  it('walks every crash point; the side effect without verify is reported "unknown state", the drill passes', async () => {
    const lines: string[] = [];
    const report = await drillAgent({ ...drillOptions(), onProgress: (line) => lines.push(line) });
    expect(report.points.length).toBeGreaterThanOrEqual(15);
    expect(report.points).toContain('after-tool-return:3');
    expect(report.points.at(-1)).toBe('after-save-done:1');
    expect(lines).toHaveLength(report.points.length);
    const byTool = Object.fromEntries(report.tools.map((tool) => [tool.tool, tool]));
    expect(byTool['read_balance']!.outcomes).toMatchObject({ 'ran-again-read-only': 2 });
    expect(byTool['send_invoice']!.outcomes).toEqual({ 'once-from-ledger': 1, 'once-verified': 1, 'once-verified-then-ran': 1 });
    expect(byTool['charge_card']!.outcomes).toEqual({ 'once-from-ledger': 1, 'unknown-told-to-model': 2 });
    expect(byTool['charge_card']!.advice).toMatch(/add verify\(input, ctx\)/);
    expect(byTool['send_invoice']!.advice).toBeNull();
    expect(report).toMatchObject({ ranTwice: false, exitCode: 0 });
    expect(drillMarkdown(report)).toContain('| after-tool-return:3 | charge_card | toolu_3 | unknown-reported | unknown state told to the model | 1 |');
  });

  it('catches a tool declared idempotent that is not: "ran twice", exit 1', async () => {
    const report = await drillAgent(drillOptions({ chargeIdempotent: true }));
    const twice = report.calls.filter((call) => call.outcome === 'ran-twice');
    expect(twice.map((call) => [call.point, call.tool, call.effects])).toEqual([['after-tool-return:3', 'charge_card', 2]]);
    expect(report).toMatchObject({ ranTwice: true, exitCode: 1 });
    expect(report.tools.find((tool) => tool.tool === 'charge_card')!.advice).toMatch(/declared idempotent, but its effect happened twice/);
  });

  it('without count(), counts each run() under its idempotency key', async () => {
    const { count: _ignored, ...withoutCount } = drillOptions({ chargeIdempotent: true });
    const report = await drillAgent(withoutCount);
    expect(report.calls.filter((call) => call.outcome === 'ran-twice').map((call) => call.point)).toEqual(['after-tool-return:3']);
  });

  it('registers a test per crash point with crashTests; the one at which the effect ran twice fails', async () => {
    const registered: Array<{ name: string; body: () => Promise<void> }> = [];
    const points = await crashTests((name, body) => registered.push({ name, body }), drillOptions({ chargeIdempotent: true }));
    expect(registered.map((test) => test.name)).toEqual(points.map((point) => `billing: killed at ${point} and resumed, no side effect twice`));
    // One after another, as a runner runs the tests of a file (the tools here share one scratch variable).
    const outcomes: unknown[] = [];
    for (const test of registered) outcomes.push(await test.body().then(() => null, (error: unknown) => error));
    const failed = outcomes.map((error, at) => [points[at], error]).filter(([, error]) => error !== null);
    expect(failed.map(([point]) => point)).toEqual(['after-tool-return:3']);
    expect(failed[0]![1]).toBeInstanceOf(SideEffectTwiceError);
  });

  it('refuses a script that does not fit: not an array, a reply without stop_reason, a tool the agent lacks, a call id twice', async () => {
    expect(() => scriptReplies({}, 's.json')).toThrow(DrillScriptError);
    expect(() => scriptReplies([{ content: [] }], 's.json')).toThrow(/reply 1 has no stop_reason/);
    const lacks = scriptReplies([{ stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'toolu_1', name: 'wire_money', input: {} }] }], 's.json');
    await expect(drillAgent({ agent: agentOf(), replies: lacks })).rejects.toThrow(/calls wire_money, which the agent billing does not have/);
    const twice = scriptReplies(
      [
        { stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_balance', input: { account: 'a' } }] },
        { stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_balance', input: { account: 'b' } }] },
      ],
      's.json',
    );
    await expect(drillAgent({ agent: agentOf(), replies: twice })).rejects.toThrow(/uses the call id toolu_1 again/);
  });
});
