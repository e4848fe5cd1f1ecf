/**
 * A parent and its sub-agent runs together, on the file store: a pause of the parent reaches its
 * children (and the resume that unpauses it, them); a child waiting for a person shows in the
 * parent's pending and is decided there; the children's spending is charged to the parent's
 * budget, each child given its share; the child's trace hangs under the parent's execute_tool
 * span; the calls of one reply run side by side; status, list and history show the tree.
 */
import path from 'node:path';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it, vi } from 'vitest';
import { childRunIdOf, FileRuns, openRun, resumeRun, startRun, subagentTool } from '../../src/index.ts';
import { RunPausedError, TreeCallAmbiguousError } from '../../src/errors.ts';
import { SimulatedCrash } from '../../src/testing.ts';
import { totalTokens } from '../../machines/agent-loop.logic.ts';
import { runCli } from '../../src/cli/main.ts';
import type { RunStore } from '../../src/store/store.ts';
import { vizPage } from '../../visualizer/viz-page.ts';
import { auditOf, editorAgent, writerAgent, type WriterOptions } from '../helpers/subagent-agents.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const PARENT = 'editor-1';

/** A folder of runs with the parent in it; its children are kept beside it (the tool's default). */
function world(writer: WriterOptions = {}, parentBudget?: { maxTotalTokens: number }) {
  const dir = tempDir();
  const runs = new FileRuns(path.join(dir, '.durable-agent'));
  const parent = () => editorAgent([subagentTool(writerAgent(dir, writer))], parentBudget ? { budget: parentBudget } : {});
  const child = (call: string) => runs.store(childRunIdOf(PARENT, call));
  return { dir, runs, parent, store: () => runs.store(PARENT), child };
}

/** No process holds the run's lock (it stopped). */
async function stopped(store: RunStore): Promise<boolean> {
  if (!(await store.exists())) return false;
  try {
    await (await store.lock()).release();
    return true;
  } catch {
    return false;
  }
}

function cliWriters() {
  const out: string[] = [];
  return { out, writers: { out: (line: string) => out.push(line), err: (line: string) => out.push(`ERR ${line}`) } };
}

describe('a parent and its sub-agent runs together', () => {
  it('a pause of the parent reaches both running children; unpausing the parent unpauses them, and its resume goes on: each note once', async () => {
    const w = world({ slowMs: 600 });
    const started = startRun({ agent: w.parent(), store: w.store(), task: 'Write two notes.', runId: PARENT });
    // A check that throws is tried again: a run not made yet cannot be read, not yet.
    await vi.waitFor(async () => expect((await w.child('toolu_a').exists()) && (await w.child('toolu_b').exists()), 'both children run').toBe(true), { timeout: 20_000, interval: 20 });
    await openRun({ store: w.store() }).pause({ by: 'ana' });
    await expect(started).rejects.toThrow(RunPausedError);
    await vi.waitFor(async () => expect((await stopped(w.child('toolu_a'))) && (await stopped(w.child('toolu_b'))), 'both children stopped').toBe(true), { timeout: 20_000, interval: 20 });
    for (const call of ['toolu_a', 'toolu_b']) {
      const child = await openRun({ store: w.child(call) }).status();
      expect(child.state, call).not.toBe('done');
      expect(child.controls.map((request) => [request.kind, request.by]), call).toEqual([['pause', 'ana']]);
    }
    const parentPaused = await openRun({ store: w.store() }).status();
    expect(parentPaused.controls.map((request) => request.kind)).toEqual(['pause']);
    // Unpaused from outside (no process drives it): the children's pauses, passed on from it, are cleared with it.
    expect((await openRun({ store: w.store() }).unpause())?.by).toBe('ana');
    for (const call of ['toolu_a', 'toolu_b']) expect((await openRun({ store: w.child(call) }).status()).controls, call).toEqual([]);

    const result = await resumeRun({ agent: w.parent(), store: w.store() });
    expect(result.status).toBe('done');
    for (const call of ['toolu_a', 'toolu_b']) {
      const child = await openRun({ store: w.child(call) }).status();
      expect([child.state, child.controls], call).toEqual(['done', []]);
    }
    expect(auditOf(w.dir)).toHaveLength(2);
    expect(new Set(auditOf(w.dir)).size).toBe(2);
  });

  it('a parent whose process died among its children, cancelled with no process driving it: its children end cancelled too', async () => {
    const w = world();
    // The process dies as a child's reply is saved: the parent and its children are left open, no process drives them.
    const crashing = editorAgent([subagentTool(writerAgent(w.dir), { crashAfter: 'after-save-a:1' })]);
    await expect(startRun({ agent: crashing, store: w.store(), task: 'Write two notes.', runId: PARENT })).rejects.toBeInstanceOf(SimulatedCrash);
    const open = async () => (await openRun({ store: w.store() }).status()).children.filter((child) => child.state !== 'done' && child.state !== 'cancelled');
    await vi.waitFor(async () => expect((await stopped(w.store())) && (await Promise.all(['toolu_a', 'toolu_b'].map(async (call) => !(await w.child(call).exists()) || stopped(w.child(call))))).every(Boolean), 'the process is gone').toBe(true), { timeout: 20_000, interval: 20 });
    const left = await open();
    expect(left.length).toBeGreaterThan(0);

    const outcome = await openRun({ store: w.store() }).cancel({ by: 'ops', reason: 'abandoned' });
    expect(outcome.outcome).toBe('cancelled');
    expect(outcome.passedOn?.map((child) => [child.runId, child.outcome])).toEqual(left.map((child) => [child.runId, 'cancelled']));
    for (const child of left) {
      const status = await openRun({ store: w.runs.store(child.runId) }).status();
      expect(status.state).toBe('cancelled');
      expect(status.cancellation).toMatchObject({ by: 'ops', reason: `its parent run ${PARENT} was cancelled (abandoned)` });
    }
    expect(await open()).toEqual([]);
  });

  it("children waiting for approval show in the parent's pending (API and CLI) and are decided through the parent", async () => {
    const w = world({ approval: true });
    const started = startRun({ agent: w.parent(), store: w.store(), task: 'Write two notes.', runId: PARENT });
    const handle = openRun({ store: w.store() });
    await vi.waitFor(async () => expect(await handle.pending(), 'both children wait').toHaveLength(2), { timeout: 20_000, interval: 20 });
    const pending = await handle.pending();
    expect(pending.map((call) => [call.run, call.tool_use_id, call.name, call.needs]).sort()).toEqual([
      [childRunIdOf(PARENT, 'toolu_a'), 'toolu_w_noteA', 'write_note', 'approval'],
      [childRunIdOf(PARENT, 'toolu_b'), 'toolu_w_noteB', 'write_note', 'approval'],
    ]);
    const cli = cliWriters();
    expect(await runCli(['pending', '--dir', w.dir, '--run', PARENT], {}, cli.writers)).toBe(0);
    expect(cli.out[0]).toMatch(/^run\s+call\s+tool/);
    expect(cli.out.join('\n')).toContain(`${childRunIdOf(PARENT, 'toolu_a')}  toolu_w_noteA`);

    // One through the programmatic handle, one through the CLI, both by the child's call id at the parent.
    await handle.decide({ tool_use_id: 'toolu_w_noteA', verdict: 'approved', by: 'ana' });
    const decided = cliWriters();
    expect(await runCli(['deny', '--dir', w.dir, '--run', PARENT, 'toolu_w_noteB', '--reason', 'not this one', '--by', 'bo'], {}, decided.writers)).toBe(0);
    const result = await started;
    expect(result.status).toBe('done');
    expect(result.text).toContain('wrote \\"note A\\"');
    expect(auditOf(w.dir)).toHaveLength(1);
    const denied = await openRun({ store: w.child('toolu_b') }).status();
    expect(denied.decided.map((call) => [call.tool_use_id, call.verdict, call.by, call.reason])).toEqual([['toolu_w_noteB', 'denied', 'bo', 'not this one']]);
    expect(await handle.pending()).toEqual([]);
  });

  it('a decision by a call id two children wait on is refused, naming both runs; each is then decided in its own run', async () => {
    const w = world({ approval: true, sameCallId: true });
    const started = startRun({ agent: w.parent(), store: w.store(), task: 'Write two notes.', runId: PARENT });
    const handle = openRun({ store: w.store() });
    await vi.waitFor(async () => expect(await handle.pending(), 'both children wait').toHaveLength(2), { timeout: 20_000, interval: 20 });
    const refused = await handle.decide({ tool_use_id: 'toolu_w', verdict: 'approved' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TreeCallAmbiguousError);
    expect((refused as TreeCallAmbiguousError).runs.slice().sort()).toEqual([childRunIdOf(PARENT, 'toolu_a'), childRunIdOf(PARENT, 'toolu_b')]);
    expect((refused as Error).message).toContain('--run ID');
    expect((await handle.pending()).every((call) => call.given === null)).toBe(true);
    await openRun({ store: w.child('toolu_a') }).decide({ tool_use_id: 'toolu_w', verdict: 'approved' });
    const cli = cliWriters();
    expect(await runCli(['approve', '--dir', w.dir, '--run', childRunIdOf(PARENT, 'toolu_b'), 'toolu_w'], {}, cli.writers)).toBe(0);
    expect((await started).status).toBe('done');
    expect(auditOf(w.dir)).toHaveLength(2);
  });

  it("the children's spending is charged to the parent once, as their turn closes; status shows what was theirs", async () => {
    const w = world({}, { maxTotalTokens: 100_000 });
    const result = await startRun({ agent: w.parent(), store: w.store(), task: 'Write two notes.', runId: PARENT });
    expect(result.status).toBe('done');
    const a = await openRun({ store: w.child('toolu_a') }).status();
    const b = await openRun({ store: w.child('toolu_b') }).status();
    const parent = await openRun({ store: w.store() }).status();
    const childrenTokens = totalTokens(a.usage) + totalTokens(b.usage);
    expect(childrenTokens).toBeGreaterThan(0);
    expect(totalTokens(parent.chargedUsage!)).toBe(childrenTokens);
    // Each child was given half of what the parent had left after its reply.
    expect(a.budget?.maxTotalTokens).toBe(b.budget?.maxTotalTokens);
    expect(a.budget!.maxTotalTokens!).toBeLessThan(50_000);
    expect(a.budget!.maxTotalTokens!).toBeGreaterThan(49_000);
    // The parent's usage is its own two replies and its children's, counted once.
    const own = totalTokens(parent.usage) - childrenTokens;
    expect(own).toBeGreaterThan(0);
    expect(parent.remaining?.tokens).toBe(100_000 - totalTokens(parent.usage));
    const cli = cliWriters();
    expect(await runCli(['status', '--dir', w.dir, '--run', PARENT], {}, cli.writers)).toBe(0);
    const text = cli.out.join('\n');
    expect(text).toContain(`sub-agent tokens`);
    expect(text).toContain(`${childrenTokens.toLocaleString('en-US')} of its ${totalTokens(parent.usage).toLocaleString('en-US')} tokens were its sub-agent runs'`);
    expect(text).toMatch(new RegExp(`sub-agent\\s+toolu_a → run ${childRunIdOf(PARENT, 'toolu_a').replace('.', '\\.')}: done`));
    const history = cliWriters();
    expect(await runCli(['history', '--dir', w.dir, '--run', PARENT], {}, history.writers)).toBe(0);
    expect(history.out.join('\n')).toContain('charged for the sub-agent runs of toolu_a, toolu_b');
    expect(history.out.join('\n')).toContain(`toolu_b → sub-agent run ${childRunIdOf(PARENT, 'toolu_b')} (done)`);
  });

  it("a child stops before a model call that could pass its share of the parent's budget: a share smaller than one call's worst case makes none", async () => {
    // The editor's first reply costs 139 tokens; each child gets half of what is left (80), less than the
    // max_tokens (4,096) its first call could write: each stops before asking, having spent and written nothing.
    const w = world({}, { maxTotalTokens: 300 });
    const result = await startRun({ agent: w.parent(), store: w.store(), task: 'Write two notes.', runId: PARENT });
    for (const call of ['toolu_a', 'toolu_b']) {
      const child = await openRun({ store: w.child(call) }).status();
      expect(child.state, call).toBe('stoppedAtBudget');
      expect(child.budget!.maxTotalTokens!, call).toBe(Math.floor((300 - 139) / 2));
      expect(totalTokens(child.usage), call).toBe(0);
      expect(child.budgetStop, call).toMatchObject({ budget: 'tokens', spent: 0, limit: 80 });
    }
    expect(auditOf(w.dir)).toHaveLength(0);
    // The parent is told why each child stopped and answers (its own budget, not a share, is checked by what it spent).
    expect(result.status).toBe('done');
    expect(result.text).toContain('its share of the parent run’s budget is spent (budget reached: 0 of 80 tokens, and the next model call could spend up to');
    const parent = await openRun({ store: w.store() }).status();
    expect(totalTokens(parent.chargedUsage ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 })).toBe(0);
  });

  it("the child's trace hangs under the parent's execute_tool span, in the parent's trace", async () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
    const w = world();
    const result = await startRun({ agent: w.parent(), store: w.store(), task: 'Write two notes.', runId: PARENT, tracer });
    expect(result.status).toBe('done');
    const spans = exporter.getFinishedSpans();
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    const tools = spans.filter((span) => span.name === 'execute_tool writer');
    const roots = spans.filter((span) => span.name === 'durable-agent run');
    expect(tools).toHaveLength(2);
    expect(roots).toHaveLength(3);
    const childRoots = roots.filter((span) => span.attributes['durable_agent.run.id'] !== PARENT);
    expect(childRoots.map((span) => span.parentSpanContext?.spanId).sort()).toEqual(tools.map((span) => span.spanContext().spanId).sort());
    expect(spans.filter((span) => span.name === 'execute_tool write_note')).toHaveLength(2);
  });

  it('the sub-agent calls of one reply run side by side; list shows each child under its parent', async () => {
    let inFlight = 0;
    let most = 0;
    const w = world({ slowMs: 300, onWrite: (phase) => ((inFlight += phase === 'start' ? 1 : -1), (most = Math.max(most, inFlight))) });
    expect((await startRun({ agent: w.parent(), store: w.store(), task: 'Write two notes.', runId: PARENT })).status).toBe('done');
    expect(most).toBe(2);
    const cli = cliWriters();
    expect(await runCli(['list', '--dir', w.dir], {}, cli.writers)).toBe(0);
    const [header, ...rows] = cli.out;
    expect(header).toMatch(/called by/);
    expect(rows[0]).toMatch(new RegExp(`^${PARENT}\\s`));
    expect(rows.slice(1, 3).map((row) => row.split(/\s{2,}/)[0]).sort()).toEqual([`└ ${childRunIdOf(PARENT, 'toolu_a')}`, `└ ${childRunIdOf(PARENT, 'toolu_b')}`]);
    expect(rows[1]).toContain(`${PARENT} (toolu_`);
    const status = await openRun({ store: w.store() }).status();
    expect(status.children.map((child) => [child.toolUseId, child.state])).toEqual([
      ['toolu_a', 'done'],
      ['toolu_b', 'done'],
    ]);
    expect((await openRun({ store: w.child('toolu_a') }).status()).calledBy).toEqual({ runId: PARENT, toolUseId: 'toolu_a' });
    // The visualizer's page: each child beside the parent's reply that called it (its save A), the parent named on the child's.
    const page = await vizPage(w.store());
    const saveA = page.run!.steps.find((step) => step.point === 'save-a')!.seq;
    expect(page.run!.subagents.map((child) => [child.toolUseId, child.runId, child.state, child.seq])).toEqual([
      ['toolu_a', childRunIdOf(PARENT, 'toolu_a'), 'done', saveA],
      ['toolu_b', childRunIdOf(PARENT, 'toolu_b'), 'done', saveA],
    ]);
    expect((await vizPage(w.child('toolu_b'))).run!.calledBy).toEqual({ runId: PARENT, toolUseId: 'toolu_b' });
  });
});
