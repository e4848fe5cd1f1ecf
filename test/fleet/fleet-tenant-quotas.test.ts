/**
 * Tenant quotas and rate limits in a fleet, with the fake Messages API on 127.0.0.1: a tenant's
 * runs stop at a budget once its spend this month reaches its quota, the spend row is exactly
 * what the runs' journals counted (also after a worker is SIGKILLed mid-run and another takes its
 * runs over), another tenant's runs go on, and a larger quota lets the stopped runs finish. A
 * rate limit of model calls holds every window of the fleet's workers to it.
 */
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { totalTokens } from '../../machines/agent-loop.logic.ts';
import type { TokenUsage } from '../../machines/agent-loop.types.ts';
import { parseArgs } from '../../src/cli/args.ts';
import { defineAgent, defineTool } from '../../src/index.ts';
import { submitRun } from '../../src/fleet/submit-run.ts';
import { listTenants, setTenant } from '../../src/fleet/tenants.ts';
import { liftQuotaStops } from '../../src/fleet/tenant-quota-stops.ts';
import { Worker } from '../../src/fleet/worker.ts';
import { anthropicModel } from '../../src/model/anthropic-model.ts';
import { costAt, priceOf } from '../../src/model/prices.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { picoUsdOf, usdText } from '../../src/store/pg/append-statement.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import type pg from 'pg';
import type { Database } from '../../src/store/pg/pool.ts';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { readSpendOfMonth, takeWindowSlot } from '../../src/store/pg/tenant-limits.ts';
import { REPO, runCliAsync, startCli } from '../helpers/cli.ts';
import { FakeAnthropic, type ReceivedRequest } from '../helpers/fake-anthropic.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

const MODULE = path.join(REPO, 'test', 'fixtures', 'agents', 'quota-agents.mjs');
const KEY = 'test-only-key-never-store-me-0123456789';
const USAGE: TokenUsage = { input: 1000, output: 100, cacheRead: 0, cacheWrite: 0 };
/** What one reply costs at list prices, as each charge rounds it. */
const REPLY_PICO_USD = picoUsdOf(costAt(priceOf('claude-sonnet-4-5')!, USAGE));

/** Each run calls its tool `toolCalls` times, then ends: toolCalls + 1 model calls a run, each with USAGE. */
function noterReplies(toolCalls: number) {
  return (request: ReceivedRequest) => {
    const calls = request.body.messages.filter((message) => message.role === 'assistant').length;
    if (calls >= toolCalls) return { reply: { ...endTurnReply('Noted.'), usage: USAGE } };
    return { reply: { ...toolUseReply([{ id: `toolu_${calls + 1}`, name: 'note', input: { text: `note ${calls + 1}` } }]), usage: USAGE } };
  };
}

/** Whose a request is: the task names the tenant ("Note for acme-2."). */
function tenantOfRequest(request: ReceivedRequest): string {
  const first = request.body.messages[0]!.content;
  return /Note for (\w+)-/.exec(typeof first === 'string' ? first : JSON.stringify(first))?.[1] ?? 'nobody';
}

async function runsOf(db: Database, tenant: string) {
  const { rows } = await db.query<{ id: string; state: string }>('SELECT id, state FROM da_runs WHERE tenant = $1 ORDER BY id', [tenant]);
  const runs = [];
  for (const row of rows) {
    const view = foldJournal(row.id, await new PgRunStore(db, row.id).load());
    runs.push({ ...row, context: view.context });
  }
  return runs;
}

async function spendOf(db: Database, tenant: string) {
  return (await readSpendOfMonth(db)).find((row) => row.tenant === tenant) ?? { cost_usd: '0.000000000000', tokens: '0', replies: '0' };
}

describe('tenant set: quotas and rate limits on the command line', () => {
  const parse = (...args: string[]) => parseArgs(['tenant', ...args, '--database-url', 'postgresql://db/x'], '/');

  it('reads each quota and limit, a --no-… flag as null, and leaves what is not given undefined', () => {
    expect(parse('set', 'acme', '--max-cost-usd-month', '200', '--max-tokens-month', '5000000', '--max-requests-minute', '60', '--no-max-tokens-minute')).toMatchObject({
      action: 'set',
      name: 'acme',
      weight: undefined,
      maxRunning: undefined,
      maxCostUsdMonth: 200,
      maxTokensMonth: 5_000_000,
      maxRequestsMinute: 60,
      maxTokensMinute: null,
    });
    expect(parse('set', 'acme', '--no-max-cost-usd-month')).toMatchObject({ maxCostUsdMonth: null, maxTokensMonth: undefined });
  });

  it('refuses a limit with its --no-… flag, nothing to set, and the limits given to list', () => {
    expect(() => parse('set', 'acme', '--max-requests-minute', '3', '--no-max-requests-minute')).toThrow('--max-requests-minute and --no-max-requests-minute say opposite things');
    expect(() => parse('set', 'acme')).toThrow('tenant set NAME needs');
    expect(() => parse('list', '--max-cost-usd-month', '5')).toThrow('are for tenant set NAME');
    expect(() => parse('set', 'acme', '--max-cost-usd-month', '0')).toThrow();
  });
});

describe.skipIf(!postgresAvailable())('tenant quotas and rate limits in a fleet', () => {
  usePostgres({ prefix: 'quotas' });

  it("a tenant's runs stop at its monthly quota, charged exactly once across a SIGKILLed worker; another tenant's go on; a larger quota lets them finish", async () => {
    const url = await freshDatabase();
    const fake = new FakeAnthropic(noterReplies(3));
    const base = await fake.start();
    const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: base, QUOTA_PACE_MS: '150' };
    const cli = (args: string[]) => runCliAsync(args, { cwd: tempDir(), env });
    const workerArgs = ['worker', '--database-url', url, '--agents', MODULE, '--lease', '1s', '--poll-interval', '100ms', '--run-concurrency', '6'];
    const db = await openDatabase(url, 2);
    try {
      // Four runs of four calls each would cost 16 replies; the quota is passed at the 12th.
      const quota = Number(usdText(REPLY_PICO_USD * 11n)) + 0.0001;
      const set = await cli(['tenant', 'set', 'acme', '--database-url', url, '--max-cost-usd-month', String(quota)]);
      expect(set.code, set.stderr).toBe(0);
      expect(set.stdout).toContain('a monthly quota of $0.0496 at list prices');
      for (const [tenant, count] of [['acme', 4], ['globex', 2]] as const) {
        for (let i = 1; i <= count; i++) {
          const submitted = await cli(['submit', '--database-url', url, '--agent', 'noter', '--task', `Note for ${tenant}-${i}.`, '--run', `${tenant}-${i}`, '--tenant', tenant, '--max-turns', '10', '--allow-unknown-agent']);
          expect(submitted.code, submitted.stderr).toBe(0);
        }
      }

      // A worker is killed once some of acme's replies are charged: its runs are under way.
      const killed = startCli(workerArgs, { cwd: tempDir(), env });
      await vi.waitFor(async () => expect(Number((await spendOf(db, 'acme')).replies)).toBeGreaterThanOrEqual(3), { timeout: 60_000, interval: 20 });
      killed.child.kill('SIGKILL');
      await killed.done;
      const after = await cli([...workerArgs, '--exit-when-idle']);
      expect(after.code, after.stderr).toBe(0);
      // It took the killed worker's runs over (a later lease).
      expect(after.stdout).toMatch(/claimed \(lease epoch ([2-9]|\d{2,})\)/);

      const acme = await runsOf(db, 'acme');
      const stopped = acme.filter((run) => run.state === 'stoppedAtBudget');
      expect(stopped.length).toBeGreaterThan(0);
      for (const run of stopped) {
        expect(run.context.budgetStop).toMatchObject({ budget: 'cost', limit: quota, tenant: 'acme', month: expect.stringMatching(/^\d{4}-\d{2}$/) });
        expect(run.context.budgetStop!.spent).toBeGreaterThanOrEqual(quota);
      }
      expect(after.stdout).toContain("tenant acme's monthly quota reached");
      for (const run of await runsOf(db, 'globex')) expect(run.state).toBe('done');

      // The spend is what the runs' journals counted, each reply once: no charge was lost or doubled by the kill.
      const assertSpendIsJournals = async () => {
        const runs = await runsOf(db, 'acme');
        const tokens = runs.reduce((sum, run) => sum + totalTokens(run.context.usage), 0);
        const replies = tokens / totalTokens(USAGE);
        const spend = await spendOf(db, 'acme');
        expect(Number(spend.tokens)).toBe(tokens);
        expect(Number(spend.replies)).toBe(replies);
        expect(spend.cost_usd).toBe(usdText(REPLY_PICO_USD * BigInt(replies)));
        return { replies, spend };
      };
      const first = await assertSpendIsJournals();
      expect(Number(first.spend.cost_usd)).toBeGreaterThanOrEqual(quota);
      // The fake saw at least every charged request of acme (a reply lost with the killed worker is asked again).
      expect(fake.requests.filter((request) => tenantOfRequest(request) === 'acme').length).toBeGreaterThanOrEqual(first.replies);
      // globex has no quota: nothing is charged to it.
      expect(Number((await spendOf(db, 'globex')).replies)).toBe(0);

      const result = await cli(['result', '--database-url', url, '--run', stopped[0]!.id]);
      expect(result.stdout).toContain("[budget] tenant acme's monthly quota reached: $0.");
      expect(result.stdout).toMatch(/tenant set acme --max-cost-usd-month USD \(larger\) lets it go on now; the workers go on with it by themselves when the month turns/);

      // A larger quota: the stopped runs are queued again and finish.
      const raised = await cli(['tenant', 'set', 'acme', '--database-url', url, '--max-cost-usd-month', '1']);
      expect(raised.code, raised.stderr).toBe(0);
      expect(raised.stdout).toContain(`${stopped.length} run(s) stopped at its quota queued again`);
      const resumed = await cli([...workerArgs, '--exit-when-idle']);
      expect(resumed.code, resumed.stderr).toBe(0);
      for (const run of await runsOf(db, 'acme')) expect(run.state).toBe('done');
      const last = await assertSpendIsJournals();
      expect(last.replies).toBeGreaterThanOrEqual(16);
      const listed = await cli(['tenant', 'list', '--database-url', url]);
      expect(listed.stdout).toMatch(/^acme +1 +- +0 +0 +\$0\.\d{4}, [\d,]+ tokens +\$1\.00 +-$/m);
    } finally {
      await db.end();
      await fake.stop();
    }
  }, 180_000);

  it("at a new month a run stopped at its tenant's quota in an earlier one is queued again; in the month it stopped, a worker leaves it stopped", async () => {
    const url = await freshDatabase();
    const fake = new FakeAnthropic(noterReplies(2));
    const base = await fake.start();
    const pool = await openDatabase(url, 4);
    const note = defineTool({ name: 'note', description: 'Take a note.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, readOnly: true, run: ({ text }: { text: string }) => `noted: ${text}` });
    const noter = defineAgent({ name: 'noter', model: anthropicModel({ model: 'claude-sonnet-4-5', apiKey: KEY, baseURL: base, maxRetries: 0 }), system: 'You take notes.', tools: [note] });
    const worker = (log: string[] = []) => new Worker({ pool, agents: [noter], runConcurrency: 2, leaseMs: 30_000, exitWhenIdle: true, pollIntervalMs: 50, log: (line) => log.push(line) });
    try {
      await setTenant(pool, 'solo', { maxCostUsdMonth: 0.0001 });
      await submitRun(pool, { agent: noter, task: 'Note for solo-1.', runId: 'solo-1', tenant: 'solo' });
      await worker().run();
      const [run] = await runsOf(pool, 'solo');
      expect(run).toMatchObject({ id: 'solo-1', state: 'stoppedAtBudget' });
      const month = run!.context.budgetStop!.month!;
      expect(month).toMatch(/^\d{4}-\d{2}$/);
      // A worker started in the month the run stopped in leaves it stopped.
      const log: string[] = [];
      await worker(log).run();
      expect((await runsOf(pool, 'solo'))[0]!.state).toBe('stoppedAtBudget');
      expect(log.join('\n')).not.toContain('queued again');
      expect(await liftQuotaStops(pool, 'solo', 'test', month)).toEqual([]);
      // What a worker does at the next month's first look: the run stopped in an earlier month is queued again, once.
      const [year, number] = month.split('-').map(Number) as [number, number];
      const next = number === 12 ? `${year + 1}-01` : `${year}-${String(number + 1).padStart(2, '0')}`;
      expect(await liftQuotaStops(pool, 'solo', 'test', next)).toEqual(['solo-1']);
      expect(await liftQuotaStops(pool, 'solo', 'test', next)).toEqual([]);
    } finally {
      await pool.end();
      await fake.stop();
    }
  }, 120_000);

  it('--max-requests-minute 3: no window of the shared limiter sees more than 3 model calls of the tenant, across two workers; the others go on', async () => {
    const url = await freshDatabase();
    const fake = new FakeAnthropic(noterReplies(1));
    const base = await fake.start();
    const pool = await openDatabase(url, 8);
    const windowMs = 1_500;
    const note = defineTool({
      name: 'note',
      description: 'Take a note.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      readOnly: true,
      run: ({ text }: { text: string }) => `noted: ${text}`,
    });
    const noter = defineAgent({ name: 'noter', model: anthropicModel({ model: 'claude-sonnet-4-5', apiKey: KEY, baseURL: base, maxRetries: 0 }), system: 'You take notes.', tools: [note] });
    try {
      await setTenant(pool, 'busy', { maxRequestsMinute: 3 });
      expect((await listTenants(pool)).find((tenant) => tenant.name === 'busy')).toMatchObject({ maxRequestsMinute: 3, maxTokensMinute: null, maxCostUsdMonth: null });
      for (let i = 1; i <= 6; i++) await submitRun(pool, { agent: noter, task: `Note for busy-${i}.`, runId: `busy-${i}`, tenant: 'busy' });
      for (let i = 1; i <= 2; i++) await submitRun(pool, { agent: noter, task: `Note for free-${i}.`, runId: `free-${i}`, tenant: 'free' });
      const waits: string[] = [];
      // Each slot the limiter grants, with the window it was counted in (by the database's clock):
      // what is held to the limit is the grants, whatever the time a call then takes to arrive.
      const granted: number[] = [];
      const watched = new Proxy(pool, {
        get(target, property, receiver) {
          if (property !== 'query') return Reflect.get(target, property, receiver);
          return async (...args: unknown[]) => {
            const answer = await (target.query as (...a: unknown[]) => Promise<pg.QueryResult>)(...args);
            const asked = args[0] as { name?: string; values?: unknown[] };
            if (asked?.name === 'da_tenant_window_take_v2' && asked.values?.[0] === 'busy' && answer.rows[0]?.taken) granted.push(answer.rows[0].window_start);
            return answer;
          };
        },
      });
      const worker = (id: string) =>
        new Worker({ pool: watched, id, agents: [noter], runConcurrency: 4, leaseMs: 30_000, exitWhenIdle: true, pollIntervalMs: 50, rateWindowMs: windowMs, log: (line) => line.includes('rate limit') && waits.push(line) });
      await Promise.all([worker('w1').run(), worker('w2').run()]);

      const { rows } = await pool.query<{ id: string; state: string }>('SELECT id, state FROM da_runs ORDER BY id');
      expect(rows.every((row) => row.state === 'done'), JSON.stringify(rows)).toBe(true);
      const busy = fake.requests.filter((request) => tenantOfRequest(request) === 'busy');
      expect(busy).toHaveLength(12);
      // One slot a call, and no window of the limiter (fixed, aligned on the epoch, of windowMs) granted more than 3.
      expect(granted).toHaveLength(busy.length);
      const perWindow = new Map<number, number>();
      for (const window of granted) perWindow.set(window, (perWindow.get(window) ?? 0) + 1);
      expect(Math.max(...perWindow.values()), JSON.stringify([...perWindow])).toBeLessThanOrEqual(3);
      expect(perWindow.size).toBeGreaterThanOrEqual(4);
      for (const window of perWindow.keys()) expect(window % windowMs).toBe(0);
      expect(waits.length).toBeGreaterThan(0);
      expect(waits[0]).toContain("tenant busy's rate limit is reached");
      // The other tenant is not held to it: its calls were all made before busy's last.
      const free = fake.requests.filter((request) => tenantOfRequest(request) === 'free');
      expect(free).toHaveLength(4);
      expect(Math.max(...free.map((request) => request.index))).toBeLessThan(Math.max(...busy.map((request) => request.index)));
    } finally {
      await pool.end();
      await fake.stop();
    }
  }, 120_000);

  it("--max-tokens-minute: a window whose replies' tokens reached the limit grants no call until the next window, which starts from nothing", async () => {
    const url = await freshDatabase();
    const pool = await openDatabase(url, 2);
    try {
      await setTenant(pool, 'wordy', { maxTokensMinute: 1_000 });
      // A tenant without rate limits is always granted.
      expect((await takeWindowSlot(pool, 'nobody', 60_000)).taken).toBe(true);
      expect((await takeWindowSlot(pool, 'wordy', 60_000)).taken).toBe(true);
      // A reply's tokens, as the append statement charges them to the window's row.
      await pool.query(`UPDATE da_tenant_window SET tokens = tokens + 1000 WHERE tenant = 'wordy'`);
      const refused = await takeWindowSlot(pool, 'wordy', 60_000);
      expect(refused.taken).toBe(false);
      expect(refused.waitMs).toBeGreaterThan(0);
      expect(refused.waitMs).toBeLessThanOrEqual(60_000);
      // Windows of 200 ms: the next one grants the call and counts from nothing.
      await pool.query(`UPDATE da_tenant_window SET tokens = 5000 WHERE tenant = 'wordy'`);
      await vi.waitFor(async () => expect((await takeWindowSlot(pool, 'wordy', 200)).taken).toBe(true), { timeout: 10_000, interval: 20 });
      const { rows } = await pool.query<{ requests: number; tokens: string }>(`SELECT requests, tokens FROM da_tenant_window WHERE tenant = 'wordy'`);
      expect(rows[0]).toEqual({ requests: 1, tokens: '0' });
    } finally {
      await pool.end();
    }
  });
});
