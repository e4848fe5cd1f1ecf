/**
 * The programmatic side of cancel and pause: cancelRun / pauseRun against a run this process
 * drives (the request is taken up at the next boundary), a running tool's ctx.signal, the result's
 * cancellation, resumeRun refusing a cancelled run, and a run killed while it compacts cancelled there.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cancelRun, pauseRun } from '../../src/runtime/cancel-run.ts';
import { ControlRefusedError, RunCancelledError } from '../../src/control/control-request.ts';
import { RunPausedError } from '../../src/control/run-control.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { tempDir } from '../helpers/temp-dir.ts';

function parts(dir: string, onRun: (signal: AbortSignal) => Promise<string>) {
  const tool = defineTool<{ q: string }>({
    name: 'slow',
    description: 'waits',
    inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    readOnly: true,
    run: (_input, ctx) => onRun(ctx.signal),
  });
  return {
    store: new FileStore(path.join(dir, '.durable-agent')),
    model: scriptedModel([toolUseReply([{ id: 'toolu_1', name: 'slow', input: { q: 'a' } }]), endTurnReply('finished')]),
    tools: [tool],
  };
}

async function journalOf(store: FileStore) {
  try {
    return (await store.load()).records.map((stored) => stored.record);
  } finally {
    store.close();
  }
}

/** Resolves when the signal aborts (with its reason's message), or after `ms`. */
function waitForAbort(signal: AbortSignal, ms: number): Promise<string> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('not aborted'), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(`aborted: ${(signal.reason as Error).message}`);
    });
  });
}

describe('cancelRun and pauseRun from a program', () => {
  it('cancelRun while a tool runs: the tool is aborted through ctx.signal, its result recorded, the run ends cancelled with who and why', async () => {
    const dir = tempDir();
    let asked: Awaited<ReturnType<typeof cancelRun>> | null = null;
    const result = await startRun({
      ...parts(dir, async (signal) => {
        asked = await cancelRun({ dir, by: 'a program', reason: 'budget' });
        return waitForAbort(signal, 10_000);
      }),
      task: 't',
    });
    expect(asked).toMatchObject({ outcome: 'requested', state: 'pendingTool' });
    expect(result.status).toBe('cancelled');
    expect(result.cancellation).toMatchObject({ by: 'a program', reason: 'budget' });
    const loaded = await new FileStore(path.join(dir, '.durable-agent')).load();
    const toolResult = loaded.records.find((stored) => stored.record.event === 'TOOL_RESULT')!.record.results!.add[0]!;
    expect(toolResult.content).toBe(`aborted: the run was asked to cancel by a program at ${new Date(result.cancellation!.at).toISOString()} (reason: budget)`);
    const refused = await resumeRun(parts(dir, async () => 'x')).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RunCancelledError);
    expect((refused as Error).message).toContain(`durable-agent fork --dir ${dir} --to NEWDIR`);
  });

  it('cancelRun on a run killed right after its save-compacting record: the cancel is taken in compacting, as the cancel command would report it', async () => {
    const dir = tempDir();
    const store = () => new FileStore(path.join(dir, '.durable-agent'));
    // A turn whose reply alone passes the trigger of a 2,000-token window: the runtime compacts before the next call.
    const run = {
      ...parts(dir, async () => 'read'),
      model: scriptedModel([toolUseReply([{ id: 'toolu_1', name: 'slow', input: { q: 'a' } }], 'a long reply '.repeat(700)), endTurnReply('finished')]),
      compaction: { mode: 'client' as const, contextWindow: 2_000 },
    };
    const crashed = await startRun({ ...run, store: store(), task: 't', crashAfter: 'after-save-compacting:1' }).catch((error: unknown) => error);
    expect(crashed).toBeInstanceOf(SimulatedCrash);
    expect((await journalOf(store())).at(-1)).toMatchObject({ event: 'COMPACT', state: 'compacting' });

    const cancelled = await cancelRun({ dir, by: 'ops', reason: 'too long' });
    // What `durable-agent cancel` prints as "[cancelled]" and exits 0 for: this call wrote the final record itself.
    expect(cancelled).toMatchObject({ outcome: 'cancelled', state: 'cancelled', request: { kind: 'cancel', by: 'ops', reason: 'too long' } });
    const records = await journalOf(store());
    expect(records.slice(-2).map((record) => [record.event, record.state])).toEqual([['COMPACT', 'compacting'], ['CANCEL', 'cancelled']]);
    expect(records.at(-1)!.cancellation).toMatchObject({ by: 'ops', reason: 'too long' });
    expect(cancelled.seq).toBe(records.at(-1)!.seq);
    // And as the command refuses (exit 2) what follows: another cancel, and a resume (fork it instead).
    await expect(cancelRun({ dir, by: 'ops' })).rejects.toBeInstanceOf(ControlRefusedError);
    expect(await resumeRun({ ...run, store: store() }).catch((error: unknown) => error)).toBeInstanceOf(RunCancelledError);
    expect(await journalOf(store())).toHaveLength(records.length);
  });

  it('pauseRun: the run stops with RunPausedError; resumeRun clears the pause and finishes', async () => {
    const dir = tempDir();
    const error = await startRun({
      ...parts(dir, async (signal) => {
        await pauseRun({ dir, by: 'ops' });
        return waitForAbort(signal, 10_000);
      }),
      task: 't',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunPausedError);
    expect((error as RunPausedError).request).toMatchObject({ kind: 'pause', by: 'ops' });
    const result = await resumeRun(parts(dir, async () => 'again'));
    expect(result.status).toBe('done');
    expect(await new FileStore(path.join(dir, '.durable-agent')).control.read()).toEqual([]);
  });

  it('pauseRun while a tool runs: the call is not aborted, it finishes and its outcome is recorded, then the run pauses; the resume reuses it', async () => {
    const dir = tempDir();
    let runs = 0;
    const error = await startRun({
      ...parts(dir, async (signal) => {
        runs += 1;
        await pauseRun({ dir, by: 'ops' });
        // Longer than the inbox's poll: a pause seen meanwhile would abort it here.
        return (await waitForAbort(signal, 1_500)) === 'not aborted' ? 'charged' : 'aborted';
      }),
      task: 't',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunPausedError);
    const records = await journalOf(new FileStore(path.join(dir, '.durable-agent')));
    expect(records.find((record) => record.event === 'TOOL_RESULT')?.results?.add?.[0]).toMatchObject({ tool_use_id: 'toolu_1', kind: 'ran', content: 'charged', is_error: false });
    const result = await resumeRun(parts(dir, async () => 'ran again'));
    expect(result.status).toBe('done');
    expect(runs).toBe(1);
  });
});
