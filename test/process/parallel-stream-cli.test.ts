/**
 * Real processes, real SIGKILL, the real SDK against the fake API: parallel read-only calls
 * killed between two completions, and a reply killed while it streams in.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Message } from '../../machines/agent-loop.types.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { runCliAsync, startCli } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic, streamEventsOf } from '../helpers/fake-anthropic.ts';
import { toolUseProblems } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const MODEL = 'claude-test-model';
const KEY = 'test-only-key';
const env = (url: string, more: Record<string, string> = {}) => ({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url, ...more });

async function journalOf(dir: string) {
  const store = new FileStore(path.join(dir, '.durable-agent'));
  try {
    return await store.load();
  } finally {
    store.close();
  }
}

const READS = toolUseReply(
  ['a', 'b', 'c'].map((name) => ({ id: `toolu_${name}`, name: 'read_file', input: { path: `${name}.txt` } })),
  'I will read the three files at once.',
);

describe('parallel read-only calls, killed between two completions', () => {
  it('SIGKILL right after the first ledger write: the resume reuses it, re-runs the two others, and the model gets all three in its order', async () => {
    const dir = tempDir();
    for (const name of ['a', 'b', 'c']) fs.writeFileSync(path.join(dir, `${name}.txt`), `contents of ${name}`);
    const server = new FakeAnthropic((request) => (assistantTurns(request) === 0 ? { reply: READS } : { reply: endTurnReply('read them all') }));
    const url = await server.start();
    try {
      const killed = await runCliAsync(['run', '--model', MODEL, '--task', 'read a, b and c', '--plain', '--verbose'], {
        cwd: dir,
        env: env(url, { CRASH_AFTER: 'after-effect-write:1', CRASH_MODE: 'sigkill' }),
      });
      expect(killed.signal).toBe('SIGKILL');
      // The three were in flight together: each had started before the first outcome was written.
      for (const name of ['a', 'b', 'c']) expect(killed.stderr).toContain(`[tool] read_file toolu_${name} started`);
      const atKill = await journalOf(dir);
      const written = atKill.records.filter((r) => r.record.event === 'TOOL_RESULT');
      expect(written).toHaveLength(1);
      const first = written[0]!.record.results!.add[0]!.tool_use_id;

      const resumed = await runCliAsync(['run', '--model', MODEL, '--resume', '--plain'], { cwd: dir, env: env(url) });
      expect(resumed.code, resumed.stderr).toBe(0);
      const reconciles = resumed.stdout.split('\n').filter((line) => line.startsWith('[resume][reconcile]'));
      expect(reconciles).toEqual(
        ['a', 'b', 'c'].map((name) =>
          `toolu_${name}` === first
            ? `[resume][reconcile] tool_use_id=toolu_${name} name=read_file ledger hit, reusing result, not re-running`
            : `[resume][reconcile] tool_use_id=toolu_${name} name=read_file ledger miss, read-only tool, re-running`,
        ),
      );
      expect(resumed.stdout).toContain('[done] read them all');
      const results = server.requests.at(-1)!.body.messages.at(-1) as Message;
      expect(results.content).toEqual(
        ['a', 'b', 'c'].map((name) => expect.objectContaining({ type: 'tool_result', tool_use_id: `toolu_${name}`, content: `contents of ${name}` })),
      );
      const final = foldJournal(path.join(dir, '.durable-agent'), await journalOf(dir));
      expect(toolUseProblems(final.context.messages)).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});

describe('a reply killed while it streams in', () => {
  it('SIGKILL mid-stream persists nothing of the reply; the resume asks again and goes on', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'a.txt'), 'contents of a');
    let reached!: () => void;
    const atHold = new Promise<void>((resolve) => (reached = resolve));
    const never = new Promise<void>(() => {});
    const reply = toolUseReply([{ id: 'toolu_a', name: 'read_file', input: { path: 'a.txt' } }], 'Reading a.txt now, then I will summarise it.');
    // The first stream stops after its text and the first piece of the tool's input, and never goes on.
    const firstInput = streamEventsOf(reply, MODEL, 0, 6).findIndex((e) => (e.delta as { type?: string } | undefined)?.type === 'input_json_delta');
    let streams = 0;
    const server = new FakeAnthropic((request) => {
      if (assistantTurns(request) > 0) return { reply: endTurnReply('summarised') };
      streams += 1;
      if (streams > 1) return { reply };
      let written = 0;
      return { stream: reply, chunk: 6, holdAt: { event: firstInput + 1, until: never }, onEvent: () => void (++written === firstInput + 1 && reached()) };
    });
    const url = await server.start();
    try {
      const running = startCli(['run', '--model', MODEL, '--task', 'summarise a.txt', '--plain'], { cwd: dir, env: env(url) });
      await atHold;
      running.child.kill('SIGKILL');
      const killed = await running.done;
      expect(killed.signal).toBe('SIGKILL');
      const atKill = await journalOf(dir);
      expect(atKill.records.map((r) => r.record.event)).toEqual(['START']);

      const resumed = await runCliAsync(['run', '--model', MODEL, '--resume', '--plain'], { cwd: dir, env: env(url) });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('[done] summarised');
      expect(streams).toBe(2);
      const final = foldJournal(path.join(dir, '.durable-agent'), await journalOf(dir));
      expect(final.context.messages[1]).toEqual({ role: 'assistant', content: reply.content });
    } finally {
      await server.stop();
    }
  });
});

describe('run --no-stream', () => {
  it('asks for each reply whole; without it, each request asks for a stream', async () => {
    const server = new FakeAnthropic(() => ({ reply: endTurnReply('fine') }));
    const url = await server.start();
    try {
      for (const [flags, stream] of [[['--no-stream'], undefined], [[], true]] as const) {
        const done = await runCliAsync(['run', '--model', MODEL, '--task', 'hello', '--plain', '--fresh', ...flags], { cwd: tempDir(), env: env(url) });
        expect(done.code, done.stderr).toBe(0);
        expect(server.requests.at(-1)!.body.stream).toBe(stream);
      }
    } finally {
      await server.stop();
    }
  });
});
