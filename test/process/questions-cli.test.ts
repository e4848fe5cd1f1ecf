/**
 * `run --allow-questions` and `run --require-approval side-effects` against the fake Anthropic
 * server (the real SDK, real HTTP, a real CLI process): the model's question stops the run
 * (exit 7), `answer` from another process gives the answer, and the resume hands it to the model
 * as the question's result. And `--decision-timeout`, which denies what nobody decided in time.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { type CliRun, runCliAsync } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic, type ReceivedRequest } from '../helpers/fake-anthropic.ts';
import { toolResultOf } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const MODEL = 'claude-test-model';
const USAGE = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 };

async function withModel<T>(script: Array<ReturnType<typeof toolUseReply>>, body: (url: string, requests: ReceivedRequest[]) => Promise<T>): Promise<T> {
  const server = new FakeAnthropic((request) => ({ reply: { ...script[assistantTurns(request)]!, usage: USAGE } }));
  const url = await server.start();
  try {
    return await body(url, server.requests);
  } finally {
    await server.stop();
  }
}

const cli = (args: string[], dir: string, url = 'http://127.0.0.1:9') =>
  runCliAsync(args, { cwd: dir, env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url } });

function expectCode(run: CliRun, code: number): void {
  expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(code);
}

describe('run --allow-questions', () => {
  it('stops on the question (exit 7), takes the answer from another process, and the model gets it', async () => {
    const dir = tempDir();
    const script = [
      toolUseReply([{ id: 'toolu_q1', name: 'ask_user', input: { question: 'Which year should the summary cover?' } }]),
      endTurnReply('Thanks, summarising 2024.'),
    ];
    await withModel(script, async (url, requests) => {
      const stopped = await cli(['run', '--model', MODEL, '--task', 'Summarise', '--allow-questions'], dir, url);
      expectCode(stopped, 7);
      expect(stopped.stdout).toContain('[question] toolu_q1 ask_user: Which year should the summary cover?\n');
      expect(stopped.stdout).toMatch(/\n {2}answer: {2}(npx --no-install )?durable-agent answer toolu_q1 'TEXT'\n/);
      // --allow-questions is pinned in the journal: a bare --resume offers ask_user again.
      expect(stopped.stdout).toMatch(/\n {2}resume: {2}(npx --no-install )?durable-agent run --resume --model claude-test-model\n$/);
      expect(requests[0]!.body.tools!.map((tool) => tool.name)).toContain('ask_user');

      const refused = await cli(['approve', 'toolu_q1'], dir);
      expectCode(refused, 2);
      expect(refused.stderr).toContain('it waits for an answer, not an approval');
      expectCode(await cli(['answer', 'toolu_q1', '2024, please', '--by', 'ana'], dir), 0);

      const resumed = await cli(['run', '--model', MODEL, '--resume'], dir, url);
      expectCode(resumed, 0);
      expect(resumed.stdout).toContain('[decided] toolu_q1 ask_user answered by ana: 2024, please');
      expect(resumed.stdout).toContain('[done] Thanks, summarising 2024.');
      const result = toolResultOf(requests[1]!.body.messages, 'toolu_q1');
      expect(result).toMatchObject({ content: '2024, please' });
      expect(result?.is_error ?? false).toBe(false);
    });
  });
});

describe('run --require-approval side-effects', () => {
  it('lets read-only tools run, stops before write_file, and runs it with the input a person edited', async () => {
    const dir = tempDir();
    const script = [
      toolUseReply([{ id: 'toolu_l', name: 'list_files', input: {} }]),
      toolUseReply([{ id: 'toolu_w', name: 'write_file', input: { path: 'out.md', content: 'draft' } }]),
      endTurnReply('Done.'),
    ];
    await withModel(script, async (url, requests) => {
      const stopped = await cli(['run', '--model', MODEL, '--task', 'Write out.md', '--require-approval', 'side-effects'], dir, url);
      expectCode(stopped, 7);
      expect(stopped.stdout).toContain('[approval] toolu_w write_file waits for a decision');
      expect(stopped.stdout).not.toContain('[approval] toolu_l');
      const bad = await cli(['approve', 'toolu_w', '--input', '{"path":"out.md"}'], dir);
      expectCode(bad, 2);
      expect(bad.stderr).toContain("does not fit the input schema of write_file: input must have required property 'content'");
      expectCode(await cli(['approve', 'toolu_w', '--input', '{"path":"out.md","content":"final"}'], dir), 0);
      expectCode(await cli(['run', '--model', MODEL, '--resume'], dir, url), 0);
      expect(fs.readFileSync(path.join(dir, 'out.md'), 'utf8')).toBe('final');
      expect(JSON.stringify(toolResultOf(requests.at(-1)!.body.messages, 'toolu_w')?.content)).toContain('final');
    });
  });
});

describe('--decision-timeout', () => {
  it('denies, on resume, what nobody decided within the time, with that reason; the call never runs', async () => {
    const dir = tempDir();
    expectCode(await cli(['demo', '--require-approval', 'write_report', '--no-wait', '--decision-timeout', '1s'], dir), 7);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const resumed = await cli(['demo', '--resume', '--decision-timeout', '1s'], dir);
    expectCode(resumed, 0);
    expect(resumed.stdout).toContain('[decided] toolu_03 write_report denied by deadline: no decision within 1s');
    expect(fs.existsSync(path.join(dir, 'report.txt'))).toBe(false);
  });

  it('denies while the run waits (--wait) once the time is up', async () => {
    const dir = tempDir();
    const started = Date.now();
    const run = await cli(['demo', '--require-approval', 'write_report', '--wait', '--decision-timeout', '2s'], dir);
    expectCode(run, 0);
    expect(run.stdout).toContain('[decided] toolu_03 write_report denied by deadline: no decision within 2s');
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(fs.existsSync(path.join(dir, 'report.txt'))).toBe(false);
  });
});
