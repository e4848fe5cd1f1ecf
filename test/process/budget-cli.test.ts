/**
 * Budgets through the real CLI: `run` with the real @anthropic-ai/sdk client against the fake
 * Messages API (its replies carry usage), `demo` with the scripted model; exit 8, status, the
 * resume with a larger budget that asks nothing twice, SIGKILL around the stop, the refusals.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelReply } from '../../machines/agent-loop.types.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
/** Priced in src/model/prices.ts: $3 per million input tokens, $15 per million output. */
const PRICED = 'claude-sonnet-4-5';
/** 100,000 input and 10,000 output tokens a reply: $0.45 at PRICED's list price. */
const USAGE = { input: 100_000, output: 10_000, cacheRead: 0, cacheWrite: 0 };
const TURNS = 5;

const journalOf = (dir: string) => path.join(dir, '.durable-agent', 'journal.jsonl');

/** Tool turns 1..TURNS-1 (list_files), then the answer; the reply is chosen by where the conversation stands. */
function fakeApi() {
  return new FakeAnthropic((request) => {
    const turns = assistantTurns(request);
    const reply: ModelReply = turns < TURNS - 1 ? toolUseReply([{ id: `toolu_${turns + 1}`, name: 'list_files', input: {} }]) : endTurnReply('All listed.');
    return { reply: { ...reply, usage: USAGE } };
  });
}

async function withApi<T>(body: (server: FakeAnthropic, env: Record<string, string>) => Promise<T>): Promise<T> {
  const server = fakeApi();
  const url = await server.start();
  try {
    return await body(server, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url });
  } finally {
    await server.stop();
  }
}

/** Which step of the script each request asked for: a step asked twice would show here twice. */
const askedSteps = (server: FakeAnthropic) => server.requests.map(assistantTurns);

describe('run --max-cost-usd against the Messages API', () => {
  it('stops with exit 8 before the call that would go past it; status shows it; same budget stops again asking nothing; a larger one makes exactly the next call', async () => {
    const dir = tempDir();
    await withApi(async (server, env) => {
      const run = ['run', '--model', PRICED, '--plain'];
      const first = await runCliAsync([...run, '--task', 'List the files', '--max-cost-usd', '1'], { cwd: dir, env });
      expect(first.code, first.stderr).toBe(8);
      // $0.45 a reply: $0.90 is under $1, so a third call is made; $1.35 reaches it.
      expect(askedSteps(server)).toEqual([0, 1, 2]);
      expect(first.stdout).toContain('[budget] budget reached: $1.35 of $1.00 (at list prices); the run is saved before its next model call.');
      expect(first.stdout).toMatch(/ {2}resume: {2}.*run --resume --model claude-sonnet-4-5 (--dir \S+ )?--max-cost-usd 2\.03\n/);

      const status = await runCliAsync(['status'], { cwd: dir });
      expect(status.stdout).toMatch(/state\s+stoppedAtBudget/);
      expect(status.stdout).toMatch(/cost\s+\$1\.35 at list prices\n/);
      expect(status.stdout).toMatch(/budget\s+cost \$1\.35 of \$1\.00 \(\$0 left\)/);
      expect(status.stdout).toMatch(/stopped\s+budget reached: \$1\.35 of \$1\.00 \(at list prices\): resume with a larger budget \(--max-cost-usd 2\.03\)/);
      const json = JSON.parse((await runCliAsync(['status', '--json'], { cwd: dir })).stdout);
      expect(json).toMatchObject({ state: 'stoppedAtBudget', budget: { maxCostUsd: 1 }, costIsEstimate: false, remaining: { costUsd: 0 }, budgetStop: { budget: 'cost', limit: 1 } });
      expect(json.costUsd).toBeCloseTo(1.35, 10);

      const before = fs.readFileSync(journalOf(dir));
      for (const args of [['--resume'], ['--resume', '--max-cost-usd', '1']]) {
        const again = await runCliAsync([...run, ...args], { cwd: dir, env });
        expect(again.code, again.stderr).toBe(8);
        expect(again.stdout).toContain('budget reached: $1.35 of $1.00');
      }
      expect(askedSteps(server)).toEqual([0, 1, 2]);
      expect(fs.readFileSync(journalOf(dir))).toEqual(before);

      const more = await runCliAsync([...run, '--resume', '--max-cost-usd', '2.03'], { cwd: dir, env });
      expect(more.code, more.stderr).toBe(0);
      expect(more.stdout).toContain('[done] All listed.');
      // Steps 3 and 4, each asked once: nothing the model answered before was asked again.
      expect(askedSteps(server)).toEqual([0, 1, 2, 3, 4]);
      const done = JSON.parse((await runCliAsync(['status', '--json'], { cwd: dir })).stdout);
      expect(done.costUsd).toBeCloseTo(2.25, 10);
      expect(done.remaining.costUsd).toBe(0);
      expect(fs.readFileSync(journalOf(dir), 'utf8')).not.toContain(KEY);
    });
  });

  it('--max-total-tokens on the same path; status without a budget estimates the cost at the model price', async () => {
    const dir = tempDir();
    await withApi(async (server, env) => {
      const first = await runCliAsync(['run', '--model', PRICED, '--plain', '--task', 'List', '--max-total-tokens', '250000'], { cwd: dir, env });
      expect(first.code, first.stderr).toBe(8);
      expect(first.stdout).toContain('budget reached: 330,000 of 250,000 tokens');
      expect(askedSteps(server)).toEqual([0, 1, 2]);
      const status = await runCliAsync(['status'], { cwd: dir });
      expect(status.stdout).toMatch(/cost\s+≈ \$1\.35 at list prices \(estimate\)/);
      expect(status.stdout).toMatch(/budget\s+tokens 330,000 of 250,000 \(0 left\)/);
    });
  });

  it('a model without a price refuses --max-cost-usd (exit 2), naming it; nothing asked, nothing written', async () => {
    const dir = tempDir();
    await withApi(async (server, env) => {
      const refused = await runCliAsync(['run', '--model', 'claude-test-model', '--task', 'x', '--max-cost-usd', '1'], { cwd: dir, env });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('claude-test-model has none in the price table');
      expect(refused.stderr).toContain('--max-total-tokens');
      expect(server.requests).toHaveLength(0);
      expect(fs.existsSync(journalOf(dir))).toBe(false);
    });
    const demo = await runCliAsync(['demo', '--max-cost-usd', '0.5'], { cwd: dir });
    expect(demo.code).toBe(2);
    expect(demo.stderr).toContain('scripted-demo has none in the price table');
    expect(fs.existsSync(journalOf(dir))).toBe(false);
  });

  it('refuses budgets out of range before anything runs', async () => {
    const dir = tempDir();
    for (const [flag, value] of [
      ['--max-cost-usd', '0'],
      ['--max-cost-usd', '-1'],
      ['--max-cost-usd', '1e3'],
      ['--max-cost-usd', '2000000'],
      ['--max-total-tokens', '0'],
      ['--max-total-tokens', '1.5'],
    ] as const) {
      const refused = await runCliAsync(['demo', `${flag}=${value}`], { cwd: dir });
      expect(refused.code, `${flag} ${value}`).toBe(2);
      expect(refused.stderr).toContain(flag);
    }
    expect(fs.existsSync(journalOf(dir))).toBe(false);
  });
});

describe('SIGKILL around the budget stop (run, real SDK)', () => {
  const start = ['run', '--model', PRICED, '--plain', '--task', 'List', '--max-cost-usd', '1'];
  const resume = ['run', '--model', PRICED, '--plain', '--resume'];

  it.concurrent.each([
    // Checkpoint B of turn 2 is durable; killed before the budget check: the resume makes call 3 (still under budget).
    ['after-save-b:2', [0, 1, 2]],
    // Killed right after the stop record: the resume stops again without asking.
    ['after-save-budget:1', [0, 1, 2]],
    // Killed after reply 3 arrived (its tokens counted, before checkpoint A): its cost counts, so the
    // resume stops at the budget without asking; a larger budget asks for step 2 again (the reply was lost).
    ['after-model-reply:3', [0, 1, 2]],
  ] as const)('killed at %s: a plain resume stops with exit 8, asking only what was never answered', async (label, asked) => {
    const dir = tempDir();
    await withApi(async (server, env) => {
      const killed = await runCliAsync(start, { cwd: dir, env: { ...env, CRASH_AFTER: label, CRASH_MODE: 'sigkill' } });
      expect(killed.signal).toBe('SIGKILL');
      const resumed = await runCliAsync(resume, { cwd: dir, env });
      expect(resumed.code, resumed.stderr).toBe(8);
      expect(askedSteps(server)).toEqual(asked);
      const more = await runCliAsync([...resume, '--max-cost-usd', '10'], { cwd: dir, env });
      expect(more.code, more.stderr).toBe(0);
      const lost = label === 'after-model-reply:3' ? [2] : [];
      expect(askedSteps(server)).toEqual([...asked, ...lost, 3, 4]);
    });
  });

  it('killed right after the REOPEN of a larger budget: a plain resume keeps the larger budget and makes the next call', async () => {
    const dir = tempDir();
    await withApi(async (server, env) => {
      expect((await runCliAsync(start, { cwd: dir, env })).code).toBe(8);
      const killed = await runCliAsync([...resume, '--max-cost-usd', '10'], { cwd: dir, env: { ...env, CRASH_AFTER: 'after-save-reopen:1', CRASH_MODE: 'sigkill' } });
      expect(killed.signal).toBe('SIGKILL');
      expect(askedSteps(server)).toEqual([0, 1, 2]);
      const plain = await runCliAsync(resume, { cwd: dir, env });
      expect(plain.code, plain.stderr).toBe(0);
      expect(askedSteps(server)).toEqual([0, 1, 2, 3, 4]);
    });
  });
});

describe('demo --max-total-tokens (scripted model)', () => {
  it('stops with exit 8 and the resume command; the live reporter and status show the figures; a larger budget finishes', async () => {
    const dir = tempDir();
    const first = await runCliAsync(['demo', '--plain', '--max-total-tokens', '300'], { cwd: dir });
    expect(first.code, first.stderr).toBe(8);
    expect(first.stdout).toMatch(/\[budget\] budget reached: 3\d\d of 300 tokens/);
    expect(first.stdout).toMatch(/resume: {2}.*demo --resume (--dir \S+ )?--max-total-tokens 600\n/);
    const status = await runCliAsync(['status'], { cwd: dir });
    expect(status.stdout).toMatch(/budget\s+tokens 3\d\d of 300 \(0 left\)/);
    expect(status.stdout).not.toMatch(/^cost/m);
    const done = await runCliAsync(['demo', '--plain', '--resume', '--max-total-tokens', '600'], { cwd: dir });
    expect(done.code, done.stderr).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'report.txt'), 'utf8')).toContain('57 words');
  });
});
