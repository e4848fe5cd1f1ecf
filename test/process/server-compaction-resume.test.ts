/**
 * A resume after server compaction (the real CLI, the real SDK, the fake Messages API that
 * compacts, a real SIGKILL): the context the resume rebuilds from the journal is the last
 * compaction block and what follows it, every tool_use in it paired with its tool_result; the
 * open calls it reconciles are those after that block (never a call the block summarised).
 * Killed right after a compaction record, and with a call open after one (checkpoint A, and a
 * call that ran but whose result was not recorded), with and without snapshots in between.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ContentBlock, Message } from '../../machines/agent-loop.types.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { pointOf } from '../../src/store/journal/record-points.ts';
import { type CliRun, runCliAsync } from '../helpers/cli.ts';
import { FakeAnthropic, type ReceivedRequest } from '../helpers/fake-anthropic.ts';
import { toolUseProblems } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { orphanResults } from '../helpers/orphan-results.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const MODEL = 'claude-test-compaction';
const WINDOW = 20_000;
const TURNS = 30;

function script() {
  let lastTurn = 0;
  return (request: ReceivedRequest) => {
    const ids = request.body.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content.filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id))));
    const last = ids.length ? Number(ids[ids.length - 1]!.slice('toolu_'.length)) : lastTurn;
    if (last >= TURNS) return { reply: endTurnReply(`Read big.txt ${TURNS} times.`) };
    lastTurn = last + 1;
    return { reply: toolUseReply([{ id: `toolu_${last + 1}`, name: 'read_file', input: { path: 'big.txt' } }]) };
  };
}

function project(): string {
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'big.txt'), 'All work and no play. '.repeat(280));
  return dir;
}

function run(dir: string, url: string, extra: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const args = ['run', '--model', MODEL, '--dir', dir, '--max-turns', String(TURNS + 5), '--plain', '--max-retries', '0', ...extra];
  return runCliAsync(args, { cwd: dir, env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url, ...env } });
}

const TASK = ['--task', 'Read big.txt over and over.', '--compact', 'server'];
const FAKE = { contextWindow: WINDOW, modelInfo: { max_input_tokens: WINDOW, compaction: true } };

const store = (dir: string) => new FileStore(path.join(dir, '.durable-agent'));


const blocksOf = (messages: readonly Message[]) => messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content));
const toolUseIds = (messages: readonly Message[]) => blocksOf(messages).filter((b) => b.type === 'tool_use').map((b) => String(b.id));

/**
 * Where the crash labels of this run fall, from one run that is not killed (the fake answers
 * alike each time): for the n-th compaction, how many checkpoints A came before it.
 */
async function checkpointsBeforeCompactions(): Promise<number[]> {
  const fake = new FakeAnthropic(script(), FAKE);
  const url = await fake.start();
  try {
    const dir = project();
    const whole = await run(dir, url, TASK);
    expect(whole.code, whole.stdout + whole.stderr).toBe(0);
    const counts: number[] = [];
    let checkpointsA = 0;
    for (const { record } of (await store(dir).load()).records) {
      const point = pointOf(record);
      if (point === 'save-a') checkpointsA += 1;
      if (point === 'save-pause') counts.push(checkpointsA);
    }
    return counts;
  } finally {
    await fake.stop();
  }
}

describe('a resume after server compaction', () => {
  it('rebuilds the last compaction block and what follows, every tool_use paired; reconciles only the calls after the block', async () => {
    const before = await checkpointsBeforeCompactions();
    expect(before.length).toBeGreaterThanOrEqual(2);
    // Each case: the crash label, whether a call is open after the block at the kill, the snapshot spacing.
    const cases: Array<{ label: string; open: boolean; snapshotEvery?: string }> = [
      { label: 'after-save-pause:1', open: false },
      { label: 'after-save-pause:2', open: false, snapshotEvery: '3' },
      { label: `after-save-a:${before[0]! + 1}`, open: true },
      { label: `after-tool-return:${before[1]! + 1}`, open: true, snapshotEvery: '4' },
    ];
    for (const { label, open, snapshotEvery } of cases) {
      const fake = new FakeAnthropic(script(), FAKE);
      const url = await fake.start();
      try {
        const dir = project();
        const env: Record<string, string> = snapshotEvery ? { DURABLE_AGENT_SNAPSHOT_EVERY: snapshotEvery } : {};
        const killed = await run(dir, url, TASK, { ...env, CRASH_AFTER: label, CRASH_MODE: 'sigkill' });
        expect(killed.signal, `${label}: ${killed.stdout}${killed.stderr}`).toBe('SIGKILL');

        // What a resume reads (from its last snapshot): the last compaction block first, and after it every
        // tool_use paired but the open turn's, whose calls are the pending ones.
        const loaded = await store(dir).load({ fromLastSnapshot: true });
        const view = foldJournal(dir, loaded);
        const messages = view.context.messages;
        const first = (messages[0]!.content as ContentBlock[])[0]!;
        expect(first.type, label).toBe('compaction');
        expect(first.signature, label).toBe(`sig_compaction_${fake.compactionsIssued}`);
        expect(blocksOf(messages).filter((b) => b.type === 'compaction'), label).toHaveLength(1);
        const pending = view.context.pending.map((call) => call.id);
        const settled = open ? messages.slice(0, -1) : messages;
        expect(toolUseProblems(settled), label).toEqual([]);
        expect(orphanResults(messages), label).toEqual([]);
        if (open) {
          expect(pending, label).toHaveLength(1);
          expect(toolUseIds(messages.slice(1)), label).toContain(pending[0]);
        } else {
          expect(pending, label).toEqual([]);
        }

        const asked = fake.requests.length;
        const verified = fake.compactionBlocksVerified;
        const resumed = await run(dir, url, ['--resume'], env);
        expect(resumed.code, `${label}: ${resumed.stdout}${resumed.stderr}`).toBe(0);
        expect(resumed.stdout).toContain(`Read big.txt ${TURNS} times.`);
        // Reconciled: exactly the calls open after the block (none when it was not open).
        const reconciled = [...resumed.stdout.matchAll(/\[resume\]\[reconcile\] tool_use_id=(\S+)/g)].map((m) => m[1]);
        expect(reconciled, label).toEqual(pending);
        // Every request of the resumed process: the block back verbatim, first; every tool_use answered once.
        expect(fake.compactionBlocksVerified, label).toBeGreaterThan(verified);
        for (const request of fake.requests.slice(asked)) {
          expect((request.body.messages[0]!.content as ContentBlock[])[0]!.type, label).toBe('compaction');
          expect(toolUseProblems(request.body.messages), label).toEqual([]);
          expect(orphanResults(request.body.messages), label).toEqual([]);
        }
        expect(Math.max(...fake.inputTokens), label).toBeLessThanOrEqual(WINDOW);
      } finally {
        await fake.stop();
      }
    }
  }, 240_000);
});
