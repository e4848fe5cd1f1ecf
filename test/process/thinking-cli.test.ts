/**
 * The real CLI and SDK against the fake Messages API: `run --thinking` killed by a real SIGKILL
 * right after checkpoint A and resumed by a plain `run --resume`, which asks with the pinned
 * thinking and price and sends every thinking block back as it came; a resume with other
 * request options refused; a deprecated model said once in our words; and what the API would
 * refuse refused before anything is written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoScript } from '../../src/demo/demo-task.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic, type ReceivedRequest, type Responder } from '../helpers/fake-anthropic.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const MODEL = 'claude-test-model';
const USAGE = { input: 1_000, output: 200, cacheRead: 0, cacheWrite: 0 };
const PRICE = 'input=3,output=15,cache-read=0.3,cache-write=3.75';

const journalOf = (dir: string) => path.join(dir, '.durable-agent', 'journal.jsonl');

async function withFake<T>(responder: Responder, body: (fake: FakeAnthropic, env: Record<string, string>) => Promise<T>): Promise<T> {
  const fake = new FakeAnthropic(responder, { redactedThinking: true });
  const url = await fake.start();
  try {
    return await body(fake, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url });
  } finally {
    await fake.stop();
  }
}

const thoughtsIn = (request: ReceivedRequest) =>
  request.body.messages.flatMap((m) => (m.role === 'assistant' && typeof m.content !== 'string' ? m.content.filter((b) => b.type === 'thinking' || b.type === 'redacted_thinking') : []));

describe('run --thinking, killed with SIGKILL and resumed', () => {
  it('sends every thinking block back unchanged, asks with the pinned thinking and price, and refuses a resume that would ask otherwise', async () => {
    const script = [toolUseReply([{ id: 'toolu_a', name: 'list_files', input: {} }], 'Let me look.'), toolUseReply([{ id: 'toolu_b', name: 'list_files', input: {} }]), endTurnReply('There are no files.')];
    await withFake(
      (request) => ({ reply: { ...script[Math.min(assistantTurns(request), 2)]!, usage: USAGE } }),
      async (fake, env) => {
        const dir = tempDir();
        const killed = await runCliAsync(['run', '--model', MODEL, '--thinking', '4000', '--price', PRICE, '--max-cost-usd', '5', '--task', 'List the files', '--plain'], {
          cwd: dir,
          env: { ...env, CRASH_AFTER: 'after-save-a:1', CRASH_MODE: 'sigkill' },
        });
        expect(killed.signal, killed.stderr).toBe('SIGKILL');
        expect(fake.requests).toHaveLength(1);
        const store = new FileStore(path.join(dir, '.durable-agent'));
        const { header } = await store.load();
        store.close();
        expect(header).toMatchObject({ request: { thinking: { type: 'enabled', budget_tokens: 4_000 } }, price: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } });

        // Another thinking on resume: refused with what differs, nothing written.
        const before = fs.readFileSync(journalOf(dir));
        const refused = await runCliAsync(['run', '--resume', '--thinking', 'adaptive'], { cwd: dir, env });
        expect(refused.code, refused.stderr).toBe(2);
        expect(refused.stderr).toContain('this resume changes --thinking: 4000 → adaptive');
        expect(refused.stderr).toContain('add --allow-request-change');
        expect(fs.readFileSync(journalOf(dir))).toEqual(before);
        expect(fake.requests).toHaveLength(1);

        // A plain resume (no --model, --thinking or --price): the run's own, so the cost budget still has its price.
        const resumed = await runCliAsync(['run', '--resume', '--plain'], { cwd: dir, env });
        expect(resumed.code, resumed.stderr).toBe(0);
        expect(resumed.stdout).toContain('[done] There are no files.');
        expect(fake.requests).toHaveLength(3);
        for (const request of fake.requests) expect(request.body.thinking).toEqual({ type: 'enabled', budget_tokens: 4_000 });
        // Each reply carried a thinking and a redacted_thinking block; each came back in every later request, byte for byte
        // (the fake answers 400 to an altered or missing one): 2 in request 2, 4 in request 3.
        expect(fake.thinkingBlocksIssued).toBe(6);
        expect(fake.thinkingBlocksVerified).toBe(6);
        expect(thoughtsIn(fake.requests[2]!).map((b) => b.type)).toEqual(['thinking', 'redacted_thinking', 'thinking', 'redacted_thinking']);
        const journal = fs.readFileSync(journalOf(dir), 'utf8');
        for (const block of thoughtsIn(fake.requests[2]!)) expect(journal).toContain(JSON.stringify(block));
        expect(journal).not.toContain(KEY);
      },
    );
  });
});

describe('the demo on a deprecated model', () => {
  it('says so once, in our words, and never in the SDK’s', async () => {
    await withFake(
      (request) => {
        const step = demoScript()[assistantTurns(request)]!;
        return { reply: { ...(typeof step === 'function' ? step(request.body.messages) : step), usage: USAGE } };
      },
      async (fake, env) => {
        const dir = tempDir();
        const run = await runCliAsync(['demo', '--model', 'claude-sonnet-4-5', '--plain'], { cwd: dir, env });
        expect(run.code, run.stderr).toBe(0);
        expect(fake.requests.length).toBeGreaterThan(2);
        expect(run.stderr.split('\n').filter((line) => line.includes('deprecated'))).toEqual([
          "[model] claude-sonnet-4-5 is deprecated and reaches end of life on 2026-11-30: move the run's agent to a newer model (https://docs.anthropic.com/en/docs/resources/model-deprecations).",
        ]);
        expect(run.stderr).not.toContain('will reach end-of-life');
      },
    );
  });
});

describe('what the API would refuse is refused before anything is written (exit 2)', () => {
  it.each([
    [['--temperature', '0.5'], 'temperature is not a field of the Messages API version 2026-10-21'],
    [['--thinking', '4000', '--max-tokens', '4000'], 'the thinking budget (4000 tokens) is not below max_tokens (4000)'],
    [['--thinking', 'adaptive', '--tool-choice', 'any'], 'toolChoice any (a forced tool call) does not go with thinking'],
    [['--tool-choice', 'tool:deploy'], 'toolChoice names deploy, which the run does not offer (it offers list_files, read_file, write_file)'],
  ])('run %j', async (flags, says) => {
    await withFake(
      () => ({ reply: endTurnReply('never asked') }),
      async (fake, env) => {
        const dir = tempDir();
        const run = await runCliAsync(['run', '--model', MODEL, '--task', 't', ...flags], { cwd: dir, env });
        expect(run.code, run.stderr).toBe(2);
        expect(run.stderr).toContain(says);
        expect(fs.existsSync(journalOf(dir))).toBe(false);
        expect(fake.requests).toHaveLength(0);
      },
    );
  });
});
