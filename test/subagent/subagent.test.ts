/**
 * Sub-agents that survive crashes: a parent whose reply calls two sub-agents, killed at every
 * crash point of its path and resumed — then each child killed at every point of its own path
 * (the kill stops the parent too) and the parent resumed: exactly two child runs exist, each
 * child's file was written once, and the parent's answer has both results. A cancel of the
 * parent reaches a running child: both end cancelled.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { defineAgent, defineTool, FileRuns, FileStore, listRuns, openRun, resumeRun, startRun, subagentTool, type ToolDefinition } from '../../src/index.ts';
import { CrashPoints, endTurnReply, scriptedModel, SimulatedCrash, toolUseReply } from '../../src/testing.ts';
import type { Message } from '../../machines/agent-loop.types.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const taskOf = (messages: readonly Message[]) => (typeof messages[0]!.content === 'string' ? messages[0]!.content : JSON.stringify(messages[0]!.content));

/** A child agent that writes one note under its call's idempotency key (verify looks for it), then answers. */
function writerAgent(dir: string, options: { slowMs?: number } = {}) {
  const writeNote = defineTool<{ text: string }>({
    name: 'write_note',
    description: 'Write a note.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    readOnly: false,
    run: async ({ text }, ctx) => {
      if (options.slowMs) await new Promise((resolve) => setTimeout(resolve, options.slowMs));
      fs.appendFileSync(path.join(dir, 'audit.log'), `${ctx.idempotencyKey}\n`);
      fs.writeFileSync(path.join(dir, ctx.idempotencyKey), text);
      return 'written';
    },
    verify: (_input, ctx) => ({ happened: fs.existsSync(path.join(dir, ctx.idempotencyKey)) }),
  });
  return defineAgent({
    name: 'writer',
    model: scriptedModel(
      [(messages) => toolUseReply([{ id: 'toolu_w', name: 'write_note', input: { text: taskOf(messages) } }]), (messages) => endTurnReply(`wrote "${taskOf(messages)}"`)],
      { name: 'scripted-writer' },
    ),
    tools: [writeNote],
  });
}

function parentAgent(tools: ToolDefinition[]) {
  return defineAgent({
    name: 'editor',
    model: scriptedModel(
      [
        toolUseReply([
          { id: 'toolu_a', name: 'writer', input: { task: 'note A' } },
          { id: 'toolu_b', name: 'writer', input: { task: 'note B' } },
        ]),
        (messages) => {
          const results = messages.flatMap((message) => (typeof message.content === 'string' ? [] : message.content.filter((block) => block.type === 'tool_result')));
          return endTurnReply(`done: ${results.map((block) => JSON.stringify(block.content)).join(' / ')}`);
        },
      ],
      { name: 'scripted-editor' },
    ),
    tools,
  });
}

function world() {
  const dir = tempDir();
  const children = new FileRuns(path.join(dir, 'children'));
  const parentStore = () => new FileStore(path.join(dir, 'parent'));
  const audit = () => (fs.existsSync(path.join(dir, 'audit.log')) ? fs.readFileSync(path.join(dir, 'audit.log'), 'utf8').split('\n').filter(Boolean) : []);
  return { dir, children, parentStore, audit };
}

async function expectTwoChildrenOnce(w: ReturnType<typeof world>, text: string | null | undefined) {
  const runs = await listRuns(w.children);
  expect(runs.map((run) => [run.state, run.task]).sort()).toEqual([
    ['done', 'note A'],
    ['done', 'note B'],
  ]);
  expect(w.audit()).toHaveLength(2);
  expect(new Set(w.audit()).size).toBe(2);
  expect(text).toContain('wrote \\"note A\\"');
  expect(text).toContain('wrote \\"note B\\"');
}

async function pathOf(start: (crashPoints: CrashPoints) => Promise<unknown>): Promise<string[]> {
  const crashPoints = new CrashPoints(undefined);
  await start(crashPoints);
  return crashPoints.passed;
}

describe('sub-agents', () => {
  it('a parent killed at every crash point of its path and resumed: two child runs, each file once', async () => {
    const probe = world();
    const points = await pathOf((crashPoints) =>
      startRun({ agent: parentAgent([subagentTool(writerAgent(probe.dir), { runs: probe.children })]), store: probe.parentStore(), task: 'Write two notes.', crashPoints }),
    );
    expect(points).toContain('after-tool-return:1');
    expect(points.length).toBeGreaterThanOrEqual(8);
    for (const point of points) {
      const w = world();
      const parent = () => parentAgent([subagentTool(writerAgent(w.dir), { runs: w.children })]);
      await expect(startRun({ agent: parent(), store: w.parentStore(), task: 'Write two notes.', crashAfter: point }), point).rejects.toThrow(SimulatedCrash);
      const result = await resumeRun({ agent: parent(), store: w.parentStore() });
      expect(result.status, point).toBe('done');
      await expectTwoChildrenOnce(w, result.text);
    }
  });

  it('each child killed at every crash point of its own path (the parent stops with it) and the parent resumed: two child runs, each file once', async () => {
    const probe = world();
    const childPoints = await pathOf((crashPoints) => startRun({ agent: writerAgent(probe.dir), store: probe.children.store('probe'), task: 'note A', crashPoints }));
    expect(childPoints).toContain('after-save-done:1');
    expect(childPoints.length).toBeGreaterThanOrEqual(8);
    for (const point of childPoints) {
      const w = world();
      const parent = (crashAfter?: string) => parentAgent([subagentTool(writerAgent(w.dir), { runs: w.children, ...(crashAfter ? { crashAfter } : {}) })]);
      await expect(startRun({ agent: parent(point), store: w.parentStore(), task: 'Write two notes.' }), point).rejects.toThrow(SimulatedCrash);
      const result = await resumeRun({ agent: parent(), store: w.parentStore() });
      expect(result.status, point).toBe('done');
      await expectTwoChildrenOnce(w, result.text);
    }
  });

  it('a cancel of the parent reaches its running child: both end cancelled', async () => {
    const w = world();
    const started = startRun({ agent: parentAgent([subagentTool(writerAgent(w.dir, { slowMs: 800 }), { runs: w.children })]), store: w.parentStore(), task: 'Write two notes.' });
    // Once a child runs its slow tool, cancel the parent (the two children run side by side: sub-agent calls are concurrencySafe).
    await vi.waitFor(async () => expect(await listRuns(w.children), 'a child runs').not.toHaveLength(0), { timeout: 20_000, interval: 20 });
    await openRun({ store: w.parentStore() }).cancel({ by: 'ana', reason: 'not needed' });
    const result = await started;
    expect(result.status).toBe('cancelled');
    const children = await listRuns(w.children);
    expect(children.map((run) => run.state)).toEqual(['cancelled', 'cancelled']);
  });
});
