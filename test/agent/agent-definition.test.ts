/**
 * An agent defined once: its version changes with what changes behaviour (model, system prompt,
 * a tool's schema, description or traits, a policy) and with nothing else (the tools' order,
 * their code); startRun with it pins its name and version in the header, and a resume or an
 * attach by another version is refused with nothing written, unless the definition declares
 * that version compatible.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AgentDefinitionError, AgentVersionMismatchError } from '../../src/errors.ts';
import { defineAgent, defineTool, FileRuns, FileStore, resumeRun, startRun } from '../../src/index.ts';
import type { ToolDefinition } from '../../src/index.ts';
import { endTurnReply, scriptedModel, SimulatedCrash, toolUseReply } from '../../src/testing.ts';
import { tempDir } from '../helpers/temp-dir.ts';

function tools(sent: string[]) {
  const lookup = defineTool<{ q: string }>({
    name: 'lookup',
    description: 'Look a customer up.',
    inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    readOnly: true,
    run: ({ q }) => `customer ${q}: ACME`,
  });
  const send = defineTool<{ to: string }>({
    name: 'send_invoice',
    description: 'Send an invoice.',
    inputSchema: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
    readOnly: false,
    run: ({ to }, ctx) => {
      sent.push(ctx.idempotencyKey);
      return `sent to ${to}`;
    },
    verify: (_input, ctx) => ({ happened: sent.includes(ctx.idempotencyKey) }),
  });
  return [lookup, send] as ToolDefinition[];
}

const script = () => [
  toolUseReply([{ id: 'toolu_1', name: 'lookup', input: { q: 'acme' } }]),
  toolUseReply([{ id: 'toolu_2', name: 'send_invoice', input: { to: 'ACME' } }]),
  endTurnReply('Invoice sent to ACME.'),
];

const billing = (sent: string[], overrides: Partial<Parameters<typeof defineAgent>[0]> = {}) =>
  defineAgent({ name: 'billing', model: scriptedModel(script(), { name: 'scripted-billing' }), system: 'You send invoices.', tools: tools(sent), ...overrides });

describe('defineAgent', () => {
  it('versions what changes behaviour, and nothing else', () => {
    const base = billing([]);
    expect(base.version).toMatch(/^[0-9a-f]{12}$/);
    expect(billing([]).version).toBe(base.version);
    expect(billing([], { tools: [...tools([])].reverse() }).version).toBe(base.version);
    const recoded = tools([]).map((tool) => ({ ...tool, run: () => 'other code' }));
    expect(billing([], { tools: recoded }).version).toBe(base.version);

    const changed = (tool: Partial<ToolDefinition>) => billing([], { tools: tools([]).map((t) => (t.name === 'send_invoice' ? { ...t, ...tool } : t)) }).version;
    const variants = [
      billing([], { system: 'You send invoices politely.' }).version,
      billing([], { model: 'claude-sonnet-5-5' }).version,
      changed({ inputSchema: { type: 'object', properties: { to: { type: 'string' }, cc: { type: 'string' } }, required: ['to'] } }),
      changed({ description: 'Send an invoice by post.' }),
      changed({ readOnly: true }),
      changed({ idempotent: true }),
      billing([], { requireApproval: ['send_invoice'] }).version,
      billing([], { budget: { maxTotalTokens: 10_000 } }).version,
      billing([], { maxTurns: 5 }).version,
    ];
    expect(new Set([base.version, ...variants]).size).toBe(variants.length + 1);
  });

  it('refuses a definition that cannot be one, saying why', () => {
    expect(() => defineAgent({ name: '../billing', model: 'claude-sonnet-5-5', tools: [] })).toThrow(AgentDefinitionError);
    expect(() => defineAgent({ name: 'billing', model: '', tools: [] })).toThrow(/model is empty/);
    expect(() => defineAgent({ name: 'billing', model: 'claude-sonnet-5-5', tools: [...tools([]), ...tools([])] })).toThrow(/two tools are named lookup/);
    expect(() => defineAgent({ name: 'billing', model: 42 as never, tools: [] })).toThrow(/model must be a Claude model name or a Model/);
  });
});

describe('startRun and resumeRun with an agent', () => {
  it('runs the agent, pins its name and version, and resumes a killed run with the same definition: the invoice once', async () => {
    const sent: string[] = [];
    const store = new FileStore(tempDir());
    const agent = billing(sent);
    await expect(startRun({ agent, store, task: 'Invoice ACME.', crashAfter: 'after-tool-return:2' })).rejects.toThrow(SimulatedCrash);
    expect((await store.load()).header.agent).toEqual({ name: 'billing', version: agent.version });
    const result = await resumeRun({ agent: billing(sent), store });
    expect(result).toMatchObject({ status: 'done', text: 'Invoice sent to ACME.' });
    expect(sent).toHaveLength(1);
  });

  it('refuses to resume with another version of the agent, writing nothing; goes on with one that declares it compatible', async () => {
    const sent: string[] = [];
    const dir = tempDir();
    const store = new FileStore(dir);
    const first = billing(sent);
    await expect(startRun({ agent: first, store, task: 'Invoice ACME.', crashAfter: 'after-save-a:2' })).rejects.toThrow(SimulatedCrash);
    const journal = fs.readFileSync(store.journalPath);
    const reworded = billing(sent, { system: 'You send invoices, and say so.' });
    const refusal = await resumeRun({ agent: reworded, store }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(AgentVersionMismatchError);
    expect(refusal).toMatchObject({ pinned: { name: 'billing', version: first.version }, offered: { name: 'billing', versions: [reworded.version] } });
    expect((refusal as Error).message).toContain(`add "${first.version}" to the agent's compatibleWith`);
    expect(fs.readFileSync(store.journalPath).equals(journal)).toBe(true);

    const other = defineAgent({ ...first, name: 'refunds' });
    await expect(resumeRun({ agent: other, store })).rejects.toThrow(/started with the agent billing, not refunds/);

    const compatible = billing(sent, { system: 'You send invoices, and say so.', compatibleWith: [first.version] });
    expect(await resumeRun({ agent: compatible, store })).toMatchObject({ status: 'done' });
    expect(sent).toHaveLength(1);
  });

  it('an attach by id with another version is refused; with the same version it answers from the store', async () => {
    const sent: string[] = [];
    const runs = new FileRuns(tempDir());
    const agent = billing(sent);
    expect(await startRun({ agent, store: runs.store('invoice-7'), task: 'Invoice ACME.' })).toMatchObject({ status: 'done' });
    expect(await startRun({ agent: billing(sent), store: runs.store('invoice-7'), task: 'Invoice ACME.' })).toMatchObject({ status: 'done', runId: 'invoice-7' });
    await expect(startRun({ agent: billing(sent, { maxTurns: 3 }), store: runs.store('invoice-7'), task: 'Invoice ACME.' })).rejects.toThrow(AgentVersionMismatchError);
    expect(sent).toHaveLength(1);
  });

  it('takes what the call gives over the definition (fewer turns), and the definition for the rest', async () => {
    const store = new FileStore(tempDir());
    const result = await startRun({ agent: billing([]), store, task: 'Invoice ACME.', maxTurns: 1 });
    expect(result.status).toBe('stoppedAtMaxTurns');
    expect((await store.load()).header.startedBy?.tools).toEqual(['lookup', 'send_invoice']);
  });
});
