/**
 * Budgets and compaction of fleet runs (`submit --max-total-tokens`, `--max-cost-usd`,
 * `--compact`, ...), with real worker and CLI processes on a real PostgreSQL: the worker starts
 * each run with them (the budget in its context, the compaction in its header), stops it in the
 * final state stoppedAtBudget, which `status` shows as stopped, resumable (not finished: a raise
 * lets a worker go on, see fleet-raise.test.ts); what a worker could not honour is refused at
 * submit (exit 2), nothing queued.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolUseReply } from '../../src/model/scripted-model.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { postgresAvailable, type PostgresServer, startPostgres } from '../helpers/postgres-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

let server: PostgresServer;
let pool: pg.Pool;
let databases = 0;

async function freshDatabase(): Promise<string> {
  const name = `budget_${++databases}`;
  await pool.query(`CREATE DATABASE ${name}`);
  const url = server.url.replace(/\/postgres$/, `/${name}`);
  const migrated = await cli(['db', 'migrate', '--database-url', url]);
  expect(migrated.code, migrated.stderr).toBe(0);
  return url;
}

const cli = (args: string[], env?: Record<string, string | undefined>) => runCliAsync(args, { cwd: tempDir(), ...(env ? { env } : {}) });
const workerArgs = (url: string) => ['worker', '--database-url', url, '--lease-ms', '1500', '--poll-ms', '100', '--exit-when-idle'];

async function runOf(url: string, id: string) {
  const db = await openDatabase(url, 2);
  try {
    const { rows } = await db.query<{ state: string; finished: boolean; spec: Record<string, unknown> }>('SELECT state, finished, spec FROM da_runs WHERE id = $1', [id]);
    const loaded = await new PgRunStore(db, id).load();
    return { ...rows[0]!, header: loaded.header, view: foldJournal(id, loaded) };
  } finally {
    await db.end();
  }
}

async function queued(url: string): Promise<number> {
  const db = await openDatabase(url, 1);
  try {
    return Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM da_runs')).rows[0]!.n);
  } finally {
    await db.end();
  }
}

describe.skipIf(!postgresAvailable())('budgets and compaction in a fleet', () => {
  beforeAll(async () => {
    server = await startPostgres();
    pool = await openDatabase(server.url, 4);
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    server?.stop();
  });

  it('submit --max-total-tokens: the worker stops each run before its next model call, final state stoppedAtBudget, not finished; status shows it', async () => {
    const url = await freshDatabase();
    const submitted = await cli(['submit', 'demo', '--database-url', url, '--count', '2', '--max-total-tokens', '1']);
    expect(submitted.code, submitted.stderr).toBe(0);
    const ids = submitted.stdout.trim().split('\n');
    const worked = await cli(workerArgs(url));
    expect(worked.code, worked.stderr).toBe(0);
    for (const id of ids) {
      expect(worked.stdout).toContain(`run ${id}: stoppedAtBudget`);
      const run = await runOf(url, id);
      expect(run).toMatchObject({ state: 'stoppedAtBudget', finished: false, spec: { budget: { maxTotalTokens: 1 } } });
      expect(run.header.version).toBe(3);
      // One model call was allowed (nothing was spent before it); its tokens reached the limit.
      expect(run.view.context.turn).toBe(1);
      expect(run.view.context.budget).toEqual({ maxTotalTokens: 1 });
      expect(run.view.context.budgetStop).toMatchObject({ budget: 'tokens', limit: 1 });
    }
    const status = await cli(['status', '--database-url', url]);
    expect(status.code, status.stderr).toBe(0);
    for (const id of ids) expect(status.stdout).toMatch(new RegExp(`${id} +stoppedAtBudget `));
    expect(status.stdout).toContain('2 runs: 0 done, 2 unfinished');
    expect(status.stdout).toContain('2 stopped at their budget');
    // Stopped, resumable: no worker takes them up again until their budget is raised.
    const idle = await cli(workerArgs(url));
    expect(idle.stdout).not.toContain('claimed');
  });

  it('submit --max-cost-usd with a Claude model (the fake API): priced at its list price, stopped by the worker; refused for the scripted model', async () => {
    const url = await freshDatabase();
    const refused = await cli(['submit', 'demo', '--database-url', url, '--max-cost-usd', '1']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('needs the price of the model, and scripted-demo has none');
    expect(await queued(url)).toBe(0);

    // Each reply reads 200,000 input tokens: $0.60 at claude-sonnet-4-5's $3 per million.
    const fake = new FakeAnthropic(() => ({ reply: { ...toolUseReply([{ id: `toolu_${Date.now()}`, name: 'read_notes', input: {} }]), usage: { input: 200_000, output: 10, cacheRead: 0, cacheWrite: 0 } } }));
    const base = await fake.start();
    try {
      const submitted = await cli(['submit', 'demo', '--database-url', url, '--model', 'claude-sonnet-4-5', '--max-cost-usd', '1', '--compact', 'off']);
      expect(submitted.code, submitted.stderr).toBe(0);
      const id = submitted.stdout.trim();
      const worked = await cli([...workerArgs(url), '--max-retries', '0'], { ANTHROPIC_API_KEY: 'test-only-key-never-store-me-0123456789', ANTHROPIC_BASE_URL: base });
      expect(worked.code, worked.stderr).toBe(0);
      expect(worked.stdout).toContain(`run ${id}: stoppedAtBudget`);
      const run = await runOf(url, id);
      expect(run).toMatchObject({ state: 'stoppedAtBudget', finished: false, spec: { model: 'claude-sonnet-4-5', budget: { maxCostUsd: 1 }, compaction: { mode: 'off' } } });
      expect(run.view.context.budgetStop).toMatchObject({ budget: 'cost', limit: 1 });
      expect(fake.requests).toHaveLength(2);
      expect(run.header).not.toHaveProperty('compaction');
    } finally {
      await fake.stop();
    }
  });

  it('submit --compact client --context-window N: pinned in each run by its worker; what a worker could not honour is refused at submit', async () => {
    const url = await freshDatabase();
    const submitted = await cli(['submit', 'demo', '--database-url', url, '--compact', 'client', '--context-window', '1000', '--compact-trigger', '0.5']);
    expect(submitted.code, submitted.stderr).toBe(0);
    const id = submitted.stdout.trim();
    const worked = await cli(workerArgs(url));
    expect(worked.code, worked.stderr).toBe(0);
    const run = await runOf(url, id);
    expect(run.state).toBe('done');
    expect(run.header).toMatchObject({ version: 3, compaction: { mode: 'client', contextWindow: 1_000, triggerRatio: 0.5 } });
    expect(run.view.context.compacted?.times).toBeGreaterThan(0);

    for (const [flags, words] of [
      [['--compact', 'server'], 'Server compaction needs a Claude model'],
      [['--compact', 'client'], '--compact client needs the context window'],
      [['--clear-tool-uses'], 'the scripted demo model does not use it'],
      [['--model', 'claude-sonnet-4-5', '--clear-exclude', 'read_note'], 'names read_note, which the run does not offer'],
    ] as const) {
      const refused = await cli(['submit', 'demo', '--database-url', url, ...flags]);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain(words);
    }
    expect(await queued(url)).toBe(1);
  });
});
