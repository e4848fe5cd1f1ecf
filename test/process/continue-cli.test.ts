/**
 * The real CLI continues a finished conversation: `demo --resume --message` with the scripted
 * model, `run --resume --message` with the real SDK against the fake Messages API (the request
 * checked), a SIGKILL right after the message record, and the refusals (exit 2, nothing written).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Message } from '../../machines/agent-loop.types.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const MODEL = 'claude-test-model';
const USAGE = { input: 50, output: 20, cacheRead: 0, cacheWrite: 0 };

const journalOf = (dir: string) => path.join(dir, '.durable-agent', 'journal.jsonl');

function withoutCacheMarks(messages: readonly Message[]): unknown {
  return JSON.parse(JSON.stringify(messages, (key, value: unknown) => (key === 'cache_control' ? undefined : value)));
}

describe('demo --resume --message', () => {
  it('continues the finished demo; status and history show the message; a refusal for a bad message writes nothing', async () => {
    const dir = tempDir();
    const first = await runCliAsync(['demo', '--plain'], { cwd: dir });
    expect(first.code, first.stderr).toBe(0);

    const cont = await runCliAsync(['demo', '--resume', '--plain', '--message', 'Add the churn figure too.'], { cwd: dir });
    expect(cont.code, cont.stderr).toBe(0);
    expect(cont.stderr).toContain('[continue] the finished run takes a new message (MAX_TURNS=20): "Add the churn figure too."');
    expect(cont.stdout).toContain('You said: "Add the churn figure too."');

    const status = await runCliAsync(['status'], { cwd: dir });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/continued\s+after turn 3, at \d{4}-\d\d-\d\dT[^ ]+ \(record \d+\): "Add the churn figure too\."/);
    const history = await runCliAsync(['history'], { cwd: dir });
    expect(history.stdout).toMatch(/REOPEN .*continued with the message "Add the churn figure too\."/);

    const before = fs.readFileSync(journalOf(dir));
    for (const args of [
      ['demo', '--message', 'no resume'],
      ['demo', '--resume', '--message', '  '],
    ]) {
      const refused = await runCliAsync(args, { cwd: dir });
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toMatch(/--message (continues a finished run: add --resume|is empty)/);
    }
    expect(fs.readFileSync(journalOf(dir))).toEqual(before);
  });

  it('killed right after the message record: a plain resume answers it once; --message again is refused', async () => {
    const dir = tempDir();
    expect((await runCliAsync(['demo', '--plain'], { cwd: dir })).code).toBe(0);
    const killed = await runCliAsync(['demo', '--resume', '--plain', '--message', 'One more thing.'], {
      cwd: dir,
      env: { CRASH_AFTER: 'after-save-reopen:1', CRASH_MODE: 'sigkill' },
    });
    expect(killed.signal).toBe('SIGKILL');

    const before = fs.readFileSync(journalOf(dir));
    const again = await runCliAsync(['demo', '--resume', '--message', 'One more thing.'], { cwd: dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('not done');
    expect(fs.readFileSync(journalOf(dir))).toEqual(before);

    const resumed = await runCliAsync(['demo', '--resume', '--plain'], { cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('You said: "One more thing."');
    const journal = fs.readFileSync(journalOf(dir), 'utf8');
    // The message record, then the reply quoting it in three places: messages, finalText, and the final record's own copy of the state (what a resume that only answers reads).
    expect(journal.split('One more thing.').length - 1).toBe(4);
  });
});

describe('run --resume --message against the Messages API', () => {
  it('sends the whole conversation plus the message, once; an unfinished run refuses a message', async () => {
    const dir = tempDir();
    const script = [toolUseReply([{ id: 'toolu_a', name: 'list_files', input: {} }]), endTurnReply('There are no files.')];
    const server = new FakeAnthropic((request) => {
      const turns = assistantTurns(request);
      return { reply: { ...(script[turns] ?? endTurnReply(`Follow-up ${turns} answered.`)), usage: USAGE } };
    });
    const url = await server.start();
    const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url };
    try {
      // Killed mid-run: not done, so a message is refused with what to do, nothing written.
      const killed = await runCliAsync(['run', '--task', 'List the files', '--model', MODEL], { cwd: dir, env: { ...env, CRASH_AFTER: 'after-save-a:1', CRASH_MODE: 'sigkill' } });
      expect(killed.signal).toBe('SIGKILL');
      const before = fs.readFileSync(journalOf(dir));
      const refused = await runCliAsync(['run', '--resume', '--model', MODEL, '--message', 'And then?'], { cwd: dir, env });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('not done');
      expect(refused.stderr).toContain('without --message');
      expect(fs.readFileSync(journalOf(dir))).toEqual(before);
      const requestsBefore = server.requests.length;

      const finished = await runCliAsync(['run', '--resume', '--model', MODEL, '--plain'], { cwd: dir, env });
      expect(finished.code, finished.stderr).toBe(0);
      const lastOfFirst = server.requests[server.requests.length - 1]!;
      expect(server.requests.length).toBe(requestsBefore + 1);

      const cont = await runCliAsync(['run', '--resume', '--model', MODEL, '--plain', '--message', 'And then?'], { cwd: dir, env });
      expect(cont.code, cont.stderr).toBe(0);
      expect(cont.stdout).toContain('[done] Follow-up 2 answered.');
      expect(server.requests.length).toBe(requestsBefore + 2);
      const asked = server.requests[server.requests.length - 1]!.body.messages;
      // The adapter marks the last block for prompt caching: compared without the mark.
      expect(withoutCacheMarks(asked.slice(0, lastOfFirst.body.messages.length))).toEqual(withoutCacheMarks(lastOfFirst.body.messages));
      expect(withoutCacheMarks(asked.slice(lastOfFirst.body.messages.length))).toEqual([
        { role: 'assistant', content: [{ type: 'text', text: 'There are no files.' }] },
        { role: 'user', content: [{ type: 'text', text: 'And then?' }] },
      ]);
      expect(JSON.stringify(asked).split('And then?').length - 1).toBe(1);
      expect(fs.readFileSync(journalOf(dir), 'utf8')).not.toContain(KEY);
    } finally {
      await server.stop();
    }
  });
});
