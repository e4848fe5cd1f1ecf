/**
 * The real @anthropic-ai/sdk client, through the real CLI, talking HTTP to a fake Messages API
 * on 127.0.0.1: every stop reason, API failures and retries, and what the requests look like.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelReply } from '../../machines/agent-loop.types.ts';
import { demoScript } from '../../src/demo/demo-task.ts';
import { endTurnReply, stopReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { type CliRun, runCliAsync } from '../helpers/cli.ts';
import { DEMO_PLAIN_LINES } from '../helpers/demo-lines.ts';
import { assistantTurns, FakeAnthropic, type FakeAnswer, type ReceivedRequest, type Responder } from '../helpers/fake-anthropic.ts';
import { toolUseProblems } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

// Shaped like nothing real (a committed string that looks like a key would trip secret scanners).
const KEY = 'test-only-key-never-store-me-0123456789';
const MODEL = 'claude-test-model';
const USAGE = { input: 50, output: 20, cacheRead: 300, cacheWrite: 40 };

/** The demo's scripted replies, served over HTTP, with API-like token usage. */
function demoReply(request: ReceivedRequest, offset = 0): FakeAnswer {
  const step = demoScript()[assistantTurns(request) - offset];
  if (!step) throw new Error(`no scripted reply for request ${request.index}`);
  const reply = typeof step === 'function' ? step(request.body.messages) : step;
  return { reply: { ...reply, usage: USAGE } };
}

async function withServer<T>(responder: Responder, body: (server: FakeAnthropic, url: string) => Promise<T>): Promise<T> {
  const server = new FakeAnthropic(responder);
  const url = await server.start();
  try {
    return await body(server, url);
  } finally {
    await server.stop();
  }
}

function cli(args: string[], dir: string, url: string, env: Record<string, string> = {}): Promise<CliRun> {
  return runCliAsync(args, { cwd: dir, env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url, ...env } });
}

const DEMO = ['demo', '--model', MODEL];

function auditLines(dir: string): number {
  const file = path.join(dir, 'report-audit.log');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
}

/** The key must not be in any file the run wrote, nor in anything it printed. */
function expectNoKey(dir: string, outputs: CliRun[]): void {
  const files: string[] = [];
  const walk = (at: string) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else files.push(full);
    }
  };
  walk(dir);
  for (const file of files) expect(fs.readFileSync(file, 'utf8').includes(KEY), file).toBe(false);
  for (const output of outputs) expect(`${output.stdout}${output.stderr}`.includes(KEY)).toBe(false);
}

function expectWellFormed(requests: ReceivedRequest[]): void {
  for (const request of requests) {
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/v1/messages');
    // The SDK sends the key as x-api-key or as a bearer token, depending on its version.
    expect(request.headers['x-api-key'] ?? request.headers.authorization?.replace(/^Bearer /, '')).toBe(KEY);
    expect(request.headers['anthropic-version']).toBeTruthy();
    expect(request.body.model).toBe(MODEL);
    expect(toolUseProblems(request.body.messages), `request ${request.index}`).toEqual([]);
    // One prompt-cache breakpoint, at the end of the last user message: the loop's prefix is reused.
    const marked = request.body.messages.flatMap((m, i) =>
      typeof m.content === 'string' ? [] : m.content.flatMap((b, j) => (b.cache_control ? [[i, j]] : [])),
    );
    const lastUser = request.body.messages.map((m) => m.role).lastIndexOf('user');
    const lastUserBlocks = request.body.messages[lastUser]!.content as unknown[];
    expect(marked).toEqual([[lastUser, lastUserBlocks.length - 1]]);
  }
}

describe('the demo on a real model API', () => {
  it.concurrent('plays the lesson over HTTP: same lines, well-formed requests, usage summed, key kept secret', async () => {
    const dir = tempDir();
    await withServer((r) => demoReply(r), async (server, url) => {
      const run = await cli(DEMO, dir, url);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe(`${DEMO_PLAIN_LINES.join('\n')}\n`);
      expect(server.requests).toHaveLength(4);
      expectWellFormed(server.requests);
      const first = server.requests[0]!.body;
      expect(first.max_tokens).toBe(4096);
      expect(first.tools!.map((t) => t.name)).toEqual(['read_notes', 'count_words', 'write_report']);
      expect(first.tools![2]!.input_schema).toMatchObject({ type: 'object', required: ['content'] });
      expect(first.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Turn sales-notes.txt into a short report and write it to report.txt.', cache_control: { type: 'ephemeral' } }] },
      ]);
      // All results of a turn in one user message, paired by id.
      const last = server.requests[3]!.body.messages;
      expect(last.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_03' }] });
      // Text blocks go back without the nulls the API sent.
      expect(JSON.stringify(last)).not.toContain('"citations":null');

      const status = await cli(['status', '--json'], dir, url);
      expect(JSON.parse(status.stdout).usage).toEqual({ input: 200, output: 80, cacheRead: 1200, cacheWrite: 160 });
      expectNoKey(dir, [run, status]);
    });
  });

  it.concurrent('resumes after a crash with no orphan or missing tool_result, re-running nothing recorded', async () => {
    const dir = tempDir();
    await withServer((r) => demoReply(r), async (server, url) => {
      const killed = await cli(DEMO, dir, url, { CRASH_AFTER: 'after-effect-write:3' });
      expect(killed.code).toBe(137);
      const resumed = await cli([...DEMO, '--resume'], dir, url);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('ledger hit, reusing result, not re-running');
      expect(server.requests).toHaveLength(4);
      expectWellFormed(server.requests);
      const afterResume = server.requests[3]!.body.messages;
      expect(JSON.stringify(afterResume).split('"tool_use_id":"toolu_03"')).toHaveLength(2);
      expect(auditLines(dir)).toBe(1);
      expectNoKey(dir, [killed, resumed]);
    });
  });

  it.concurrent('makes a model call again when a crash came after its reply, and counts the tokens of both', async () => {
    const dir = tempDir();
    await withServer((r) => demoReply(r), async (server, url) => {
      expect((await cli(DEMO, dir, url, { CRASH_AFTER: 'after-model-reply:2' })).code).toBe(137);
      expect((await cli([...DEMO, '--resume'], dir, url)).code).toBe(0);
      expect(server.requests).toHaveLength(5);
      expect(assistantTurns(server.requests[1]!)).toBe(assistantTurns(server.requests[2]!));
      const status = JSON.parse((await cli(['status', '--json'], dir, url)).stdout);
      expect(status.usage).toEqual({ input: 250, output: 100, cacheRead: 1500, cacheWrite: 200 });
    });
  });
});

describe('every stop reason', () => {
  it.concurrent('stop_sequence ends the run as end_turn does', async () => {
    const dir = tempDir();
    await withServer(
      (r) => (assistantTurns(r) < 3 ? demoReply(r) : { reply: { ...stopReply('stop_sequence', 'Report written; stopping at the marker.'), usage: USAGE } }),
      async (_server, url) => {
        const run = await cli(DEMO, dir, url);
        expect(run.code).toBe(0);
        expect(run.stdout).toContain('[done] Report written; stopping at the marker.');
      },
    );
  });

  it.concurrent('max_tokens: the cut-off tool_use is never run; a resume with a larger --max-tokens asks again', async () => {
    const dir = tempDir();
    const cutOff = (r: ReceivedRequest): FakeAnswer => {
      const answer = demoReply(r) as { reply: ModelReply };
      return { reply: { ...answer.reply, stop_reason: 'max_tokens' } };
    };
    await withServer((r) => (assistantTurns(r) === 2 ? cutOff(r) : demoReply(r)), async (server, url) => {
      const stopped = await cli(DEMO, dir, url);
      expect(stopped.code).toBe(6);
      expect(stopped.stdout).toContain('[failed] The model hit max_tokens');
      expect(stopped.stdout).toContain('--max-tokens');
      expect(fs.existsSync(path.join(dir, 'report.txt'))).toBe(false);
      expect(JSON.parse((await cli(['status', '--json'], dir, url)).stdout)).toMatchObject({ state: 'failed', turn: 2 });

      server.respondWith((r) => demoReply(r));
      const resumed = await cli([...DEMO, '--resume', '--max-tokens', '8000'], dir, url);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(server.requests.at(-1)!.body.max_tokens).toBe(8000);
      expect(auditLines(dir)).toBe(1);
      expectWellFormed(server.requests);
    });
  });

  it.concurrent('pause_turn sends the paused content back and goes on', async () => {
    const dir = tempDir();
    const paused: ModelReply = { content: [{ type: 'text', text: 'Searching the web…' }], stop_reason: 'pause_turn', usage: USAGE };
    await withServer((r) => (assistantTurns(r) === 0 ? { reply: paused } : demoReply(r, 1)), async (server, url) => {
      const run = await cli(DEMO, dir, url);
      expect(run.code, run.stderr).toBe(0);
      expect(server.requests[1]!.body.messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Searching the web…' }] });
      expect(server.requests).toHaveLength(5);
    });
  });

  for (const [reason, words] of [
    ['refusal', 'The model refused'],
    ['model_context_window_exceeded', "The conversation no longer fits the model's context window"],
  ] as const) {
    it.concurrent(`${reason} stops the run with a clear message and a consistent store`, async () => {
      const dir = tempDir();
      await withServer((r) => (assistantTurns(r) === 1 ? { reply: { ...stopReply(reason), usage: USAGE } } : demoReply(r)), async (server, url) => {
        const run = await cli(DEMO, dir, url);
        expect(run.code).toBe(6);
        expect(run.stdout).toContain(`[failed] ${words}`);
        const status = JSON.parse((await cli(['status', '--json'], dir, url)).stdout);
        expect(status).toMatchObject({ state: 'failed', turn: 1, pending: [] });
        const again = await cli([...DEMO, '--resume'], dir, url);
        expect(again.code).toBe(6);
        expect(server.requests).toHaveLength(2);
      });
    });
  }
});

describe('API failures and retries', () => {
  it.concurrent('429 with retry-after is retried after the wait it asks for', async () => {
    const dir = tempDir();
    await withServer(
      (r) => (r.index === 0 ? { status: 429, errorType: 'rate_limit_error', message: 'slow down', headers: { 'retry-after': '1' } } : demoReply(r)),
      async (server, url) => {
        const run = await cli(DEMO, dir, url);
        expect(run.code, run.stderr).toBe(0);
        expect(server.requests).toHaveLength(5);
        expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(900);
      },
    );
  });

  it.concurrent('429 without retry-after, 529, 500, 503 and a dropped connection are all retried', async () => {
    const dir = tempDir();
    const failures: Record<number, FakeAnswer[]> = {
      0: [{ status: 429, errorType: 'rate_limit_error', message: 'rate limited' }],
      1: [{ status: 529, errorType: 'overloaded_error', message: 'Overloaded' }],
      2: [{ status: 500, errorType: 'api_error', message: 'internal' }, { status: 503, errorType: 'api_error', message: 'unavailable' }],
      3: [{ drop: true }],
    };
    const served = new Map<number, number>();
    await withServer(
      (r) => {
        const turn = assistantTurns(r);
        const n = served.get(turn) ?? 0;
        served.set(turn, n + 1);
        return failures[turn]?.[n] ?? demoReply(r);
      },
      async (server, url) => {
        const run = await cli(DEMO, dir, url);
        expect(run.code, run.stderr).toBe(0);
        expect(server.requests).toHaveLength(4 + 5);
        expect(server.answered).toHaveLength(4);
        expectWellFormed(server.requests);
      },
    );
  });

  it.concurrent('a request that times out is made again', async () => {
    const dir = tempDir();
    await withServer((r) => (r.index === 0 ? { hang: true } : demoReply(r)), async (server, url) => {
      const run = await cli([...DEMO, '--timeout', '1000', '--max-retries', '2'], dir, url);
      expect(run.code, run.stderr).toBe(0);
      expect(server.requests).toHaveLength(5);
    });
  });

  it.concurrent('when retries run out the run stops (exit 3), intact; a later --resume goes on without re-running a recorded tool', async () => {
    const dir = tempDir();
    const outage: FakeAnswer = { status: 503, errorType: 'api_error', message: 'Service Unavailable' };
    await withServer((r) => (assistantTurns(r) < 2 ? demoReply(r) : outage), async (server, url) => {
      const failed = await cli([...DEMO, '--max-retries', '1'], dir, url);
      expect(failed.code).toBe(3);
      expect(failed.stderr).toContain('answered 503');
      expect(failed.stderr).toContain('Service Unavailable');
      expect(failed.stderr).toContain('resume');
      expect(JSON.parse((await cli(['status', '--json'], dir, url)).stdout)).toMatchObject({ state: 'closed', turn: 2, ledgerEntries: 2 });

      server.respondWith((r) => demoReply(r));
      const resumed = await cli([...DEMO, '--resume'], dir, url);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('[resume] read turn=2 pending=none');
      const history = JSON.parse((await cli(['history', '--json'], dir, url)).stdout) as Array<{ point: string }>;
      expect(history.filter((step) => step.point === 'effect-write')).toHaveLength(3);
      expect(auditLines(dir)).toBe(1);
      expectNoKey(dir, [failed, resumed]);
    });
  });

  for (const [status, errorType, message] of [
    [400, 'invalid_request_error', 'max_tokens: must be at most 64000'],
    [401, 'authentication_error', 'invalid x-api-key'],
    [403, 'permission_error', 'Your API key does not have permission to use the specified resource.'],
  ] as const) {
    it.concurrent(`${status} stops at once with the API's message`, async () => {
      const dir = tempDir();
      await withServer(() => ({ status, errorType, message }), async (server, url) => {
        const run = await cli(DEMO, dir, url);
        expect(run.code).toBe(3);
        expect(run.stderr).toContain(`answered ${status}`);
        expect(run.stderr).toContain(message);
        expect(server.requests).toHaveLength(1);
        expectNoKey(dir, [run]);
      });
    });
  }
});

describe('durable-agent run', () => {
  it.concurrent('drives a real model with file tools in a directory, with a system prompt from a file', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'notes.md'), '# Notes\n- ship it\n');
    fs.writeFileSync(path.join(dir, 'system.txt'), 'You are terse.');
    const script = [
      toolUseReply([{ id: 'toolu_a', name: 'list_files', input: {} }]),
      toolUseReply([{ id: 'toolu_b', name: 'read_file', input: { path: 'notes.md' } }]),
      toolUseReply([{ id: 'toolu_c', name: 'write_file', input: { path: 'out/summary.md', content: 'Ship it.\n' } }]),
      endTurnReply('Wrote out/summary.md.'),
    ];
    await withServer((r) => ({ reply: { ...script[assistantTurns(r)]!, usage: USAGE } }), async (server, url) => {
      const run = await cli(['run', '--task', 'Summarise notes.md into out/summary.md', '--model', MODEL, '--system', 'system.txt'], dir, url);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('[done] Wrote out/summary.md.');
      expect(fs.readFileSync(path.join(dir, 'out', 'summary.md'), 'utf8')).toBe('Ship it.\n');
      expect(server.requests.map((r) => r.body.system)).toEqual(['You are terse.', 'You are terse.', 'You are terse.', 'You are terse.']);
      expect(server.requests[0]!.body.tools!.map((t) => t.name)).toEqual(['list_files', 'read_file', 'write_file']);
      const listed = server.requests[1]!.body.messages.at(-1)!.content as unknown as Array<{ content: string }>;
      expect(listed[0]!.content).toContain('notes.md');
      expect(listed[0]!.content).not.toContain('.durable-agent');
      expectWellFormed(server.requests);
    });
  });

  it.concurrent('refuses to start without a key, without --model, or without --task, before anything runs', async () => {
    const dir = tempDir();
    const noKey = await runCliAsync(['run', '--task', 'x', '--model', MODEL], { cwd: dir });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('ANTHROPIC_API_KEY');
    expect((await runCliAsync(['run', '--task', 'x'], { cwd: dir, env: { ANTHROPIC_API_KEY: KEY } })).code).toBe(2);
    expect((await runCliAsync(['run', '--model', MODEL], { cwd: dir, env: { ANTHROPIC_API_KEY: KEY } })).code).toBe(2);
    expect(fs.existsSync(path.join(dir, '.durable-agent'))).toBe(false);
  });
});
