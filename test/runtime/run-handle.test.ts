/**
 * openRun() on real file-store runs, through the package's entries as a program imports them:
 * a run waiting for an approval read (status, history, pending), decided and taken up; a fork of
 * it, cancelled; a pause of a running run, cleared; the archive pruned. Each method gives what
 * the function behind the CLI's command gives, and refuses as it does.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ControlRefusedError, DecisionRefusedError, ForkRefusedError, PruneRuleMissingError, RunPausedError, StoreMissingError } from '../../src/errors.ts';
import { defineTool, FileStore, openRun, resumeRun, startRun } from '../../src/index.ts';
import { readRunHistory, readRunStatus } from '../../src/runtime/run-status.ts';
import { endTurnReply, MemoryStore, scriptedModel, toolUseReply } from '../../src/testing.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const storeIn = (dir: string) => new FileStore(path.join(dir, '.durable-agent'));

const script = () => [
  toolUseReply([
    { id: 'toolu_a', name: 'lookup', input: { q: 'a' } },
    { id: 'toolu_b', name: 'send_email', input: { to: 'x@example.com' } },
  ]),
  endTurnReply('mail sent'),
];

/** A run in `dir` stopped for a person's approval of toolu_b (wait: false), and how to resume it. */
async function waitingRun() {
  const dir = tempDir();
  const { tools, counter } = countingTools();
  const parts = { tools, requireApproval: ['send_email'], wait: false };
  const result = await startRun({ ...parts, store: storeIn(dir), model: scriptedModel(script()), task: 'mail' });
  expect(result.status).toBe('waiting');
  const resume = () => resumeRun({ ...parts, store: storeIn(dir), model: scriptedModel(script()) });
  return { dir, tools, counter, resume, runId: result.runId };
}

const lookupOnly = defineTool<{ q: string }>({
  name: 'lookup',
  description: 'Look something up.',
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  readOnly: true,
  run: ({ q }) => `answer to ${q}`,
});

describe('openRun', () => {
  it('reads a run that waits for approval, decides it with the run’s tools and a clock, and the resume takes the decision up', async () => {
    const { dir, tools, counter, resume, runId } = await waitingRun();
    const run = openRun({ dir });
    expect(run.store).toBeInstanceOf(FileStore);
    expect(run.store.location).toBe(path.join(dir, '.durable-agent'));

    const status = await run.status();
    expect(status).toMatchObject({ runId, task: 'mail', state: 'awaitingDecision', turn: 1 });
    expect(status.waiting.map((call) => [call.tool_use_id, call.needs])).toEqual([['toolu_b', 'approval']]);
    expect(status).toEqual(await readRunStatus(storeIn(dir)));

    const history = await run.history();
    expect(history[0]).toMatchObject({ seq: 0, event: 'START' });
    expect(history.at(-1)).toMatchObject({ event: 'DECISION_NEEDED', state: 'awaitingDecision', waitingFor: { tool_use_id: 'toolu_b', name: 'send_email', needs: 'approval' } });
    expect(history).toHaveLength(status.records);
    expect(history).toEqual(await readRunHistory(storeIn(dir)));

    const pending = await run.pending();
    expect(pending.map(({ tool_use_id, needs, awaited, given }) => ({ tool_use_id, needs, awaited, given }))).toEqual([{ tool_use_id: 'toolu_b', needs: 'approval', awaited: true, given: null }]);
    expect(pending[0]!.since).toEqual(expect.any(Number));

    const refused = await run.decide({ tool_use_id: 'toolu_zz', verdict: 'approved' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DecisionRefusedError);
    expect((refused as DecisionRefusedError).reason).toBe('no-such-call');
    // An edited input is checked against the tool's schema, which only the run's tools give.
    const unchecked = await run.decide({ tool_use_id: 'toolu_b', verdict: 'approved', input: { to: 'z@example.com' } }).catch((error: unknown) => error);
    expect((unchecked as DecisionRefusedError).reason).toBe('invalid-input');

    const decision = await run.decide({ tool_use_id: 'toolu_b', verdict: 'approved', by: 'ana', input: { to: 'z@example.com' }, tools, now: () => 42 });
    expect(decision).toEqual({ tool_use_id: 'toolu_b', verdict: 'approved', by: 'ana', at: 42, input: { to: 'z@example.com' } });
    expect((await run.pending()).map((call) => [call.tool_use_id, call.given])).toEqual([['toolu_b', decision]]);

    expect((await resume()).status).toBe('done');
    expect(counter.of('toolu_b')).toBe(1);
    const done = await run.status();
    expect(done).toMatchObject({ state: 'done', finalText: 'mail sent', waiting: [] });
    expect(done.decided.map(({ tool_use_id, verdict, by }) => ({ tool_use_id, verdict, by }))).toEqual([{ tool_use_id: 'toolu_b', verdict: 'approved', by: 'ana' }]);
    expect(await run.pending()).toEqual([]);
  });

  it('forks the run where it waited; the fork waits again, is named as the parent’s, and is cancelled at once (no process drives it)', async () => {
    const { dir, runId } = await waitingRun();
    const parent = openRun({ dir });
    const at = (await parent.history()).find((step) => step.event === 'DECISION_NEEDED')!.seq;
    const childDir = path.join(tempDir(), 'child');

    const forked = await parent.fork({ to: childDir, at });
    expect(forked).toMatchObject({ state: 'awaitingDecision', records: at + 1, forkedFrom: { runId, seq: at }, lineageNoteProblem: null });
    expect((await parent.status()).forks.map((fork) => fork.child.runId)).toEqual([forked.runId]);
    const refused = await parent.fork({ to: dir }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ForkRefusedError);
    expect((refused as ForkRefusedError).problem).toBe('same-run');

    const child = openRun({ dir: childDir });
    expect(await child.status()).toMatchObject({ runId: forked.runId, state: 'awaitingDecision', forkedFrom: { runId, seq: at } });
    expect((await child.pending()).map((call) => call.tool_use_id)).toEqual(['toolu_b']);

    const cancelled = await child.cancel({ by: 'ops', reason: 'not needed' });
    expect(cancelled).toMatchObject({ outcome: 'cancelled', state: 'cancelled', request: { kind: 'cancel', by: 'ops', reason: 'not needed' }, location: child.store.location });
    expect(await child.status()).toMatchObject({ state: 'cancelled', cancellation: { by: 'ops', reason: 'not needed' } });
    const again = await child.cancel().catch((error: unknown) => error);
    expect(again).toBeInstanceOf(ControlRefusedError);
    expect((again as ControlRefusedError).why).toBe('finished');
    expect((await parent.status()).state).toBe('awaitingDecision');
  });

  it('pauses a run while its process drives it; the run stops paused, unpause clears the pause, and a resume finishes', async () => {
    const dir = tempDir();
    const run = openRun({ dir });
    let asked: Awaited<ReturnType<typeof run.pause>> | null = null;
    const pausing = defineTool<{ q: string }>({
      ...lookupOnly,
      run: async ({ q }) => {
        asked = await run.pause({ by: 'ops' });
        return `answer to ${q}`;
      },
    });
    const model = () => scriptedModel([toolUseReply([{ id: 'toolu_1', name: 'lookup', input: { q: 'a' } }]), endTurnReply('found')]);
    const stopped = await startRun({ store: storeIn(dir), model: model(), tools: [pausing], task: 'look' }).catch((error: unknown) => error);
    expect(stopped).toBeInstanceOf(RunPausedError);
    expect(asked).toMatchObject({ outcome: 'requested', state: 'pendingTool', request: { kind: 'pause', by: 'ops' } });

    expect((await run.status()).controls).toMatchObject([{ kind: 'pause', by: 'ops' }]);
    const notRunning = await run.pause().catch((error: unknown) => error);
    expect(notRunning).toBeInstanceOf(ControlRefusedError);
    expect((notRunning as ControlRefusedError).why).toBe('not-running');

    expect(await run.unpause()).toMatchObject({ kind: 'pause', by: 'ops' });
    expect((await run.status()).controls).toEqual([]);
    expect(await run.unpause()).toBeNull();
    expect((await resumeRun({ store: storeIn(dir), model: model(), tools: [lookupOnly] })).status).toBe('done');
    expect((await run.status()).state).toBe('done');
  });

  it('prunes the finished runs archived beside the current one, newest first, and needs a rule', async () => {
    const dir = tempDir();
    const ids: string[] = [];
    for (const task of ['one', 'two', 'three']) {
      const model = scriptedModel([toolUseReply([{ id: 'toolu_1', name: 'lookup', input: { q: task } }]), endTurnReply(task)]);
      ids.push((await startRun({ store: storeIn(dir), model, tools: [lookupOnly], task })).runId);
    }
    const archive = path.join(dir, '.durable-agent', 'archive');
    const journals = () => fs.readdirSync(archive).filter((name) => name.startsWith('journal-'));
    expect(journals()).toHaveLength(2);
    const run = openRun({ dir });

    await expect(run.prune({})).rejects.toBeInstanceOf(PruneRuleMissingError);
    const dry = await run.prune({ keep: 1, dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, kept: [], failed: [] });
    expect(dry.removed.map((pruned) => pruned.id)).toEqual([ids[0]]);
    expect(journals()).toHaveLength(2);

    const pruned = await run.prune({ keep: 0 });
    expect(pruned.removed.map((removed) => [removed.id, removed.state])).toEqual([
      [ids[1], 'done'],
      [ids[0], 'done'],
    ]);
    expect(pruned.totalBytes).toBeGreaterThan(0);
    expect(journals()).toEqual([]);
    expect(await run.status()).toMatchObject({ runId: ids[2], state: 'done', finalText: 'three' });
  });

  it('takes the store startRun took; refuses a prune where no archive is, and an open without a run', async () => {
    const store = new MemoryStore();
    const result = await startRun({ store, model: scriptedModel([endTurnReply('hi')]), tools: [], task: 'greet' });
    const run = openRun({ store });
    expect(run.store).toBe(store);
    expect(await run.status()).toMatchObject({ runId: result.runId, state: 'done', finalText: 'hi' });
    expect((await run.history()).map((step) => step.event)).toEqual((await readRunHistory(store)).map((step) => step.event));
    await expect(run.prune({ keep: 0 })).rejects.toThrow(/keeps no archive of runs to prune/);

    await expect(openRun({ dir: tempDir() }).status()).rejects.toBeInstanceOf(StoreMissingError);
    expect(() => openRun({} as Parameters<typeof openRun>[0])).toThrow(RangeError);
  });

  it('every method takes at most one options object', async () => {
    const { dir } = await waitingRun();
    const run = openRun({ dir });
    const methods = Object.entries(run).filter(([, value]) => typeof value === 'function');
    expect(methods.map(([name]) => name).sort()).toEqual(['cancel', 'decide', 'fork', 'history', 'pause', 'pending', 'prune', 'status', 'unpause']);
    for (const [name, method] of methods) expect((method as (...args: unknown[]) => unknown).length, name).toBeLessThanOrEqual(1);
  });
});
