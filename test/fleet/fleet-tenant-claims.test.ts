/**
 * Claims share a fleet among its tenants: a tenant with hundreds of queued runs delays another's
 * first run by a claim or two; weights give tenants claims in proportion; a tenant's most runs
 * driven at once holds across workers claiming together; and with real workers, a tenant that
 * submits after another's big batch has its runs done long before that batch.
 */
import { describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/index.ts';
import { endTurnReply, scriptedModel } from '../../src/testing.ts';
import { submitRun } from '../../src/fleet/submit-run.ts';
import { listTenants, setTenant, TenantSettingsError } from '../../src/fleet/tenants.ts';
import { Worker } from '../../src/fleet/worker.ts';
import { claimNextRuns, releaseLease } from '../../src/store/pg/leases.ts';
import { migrate } from '../../src/store/pg/schema.ts';
import { insertQueuedRuns } from '../../src/store/pg/queue.ts';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

const spec = (tenant: string) => ({ kind: 'agent', agent: 'quick', task: `For ${tenant}.`, ...(tenant === 'default' ? {} : { tenant }) });
const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);
const tenantOf = (runId: string) => runId.split('-')[0]!;

describe.skipIf(!postgresAvailable())('claims shared among tenants', () => {
  usePostgres({ prefix: 'tenant_claims' });

  it("a tenant's first run waits a claim or two behind another's three hundred queued before it", async () => {
    const pool = await openDatabase(await freshDatabase(), 2);
    try {
      await migrate(pool);
      await insertQueuedRuns(pool, ids('a', 300), spec('a'));
      await insertQueuedRuns(pool, ids('b', 5), spec('b'));
      const claimed: string[] = [];
      for (let i = 0; i < 6; i++) claimed.push(...(await claimNextRuns(pool, 'w', 60_000, 1)).map((lease) => lease.runId));
      expect(claimed.slice(0, 2).map(tenantOf).sort()).toEqual(['a', 'b']);
      // Then turn by turn.
      expect(claimed.map(tenantOf)).toEqual(['a', 'b', 'a', 'b', 'a', 'b']);
      // Each tenant's runs in the queue's order.
      expect(claimed.filter((id) => id.startsWith('a'))).toEqual(ids('a', 3));
    } finally {
      await pool.end();
    }
  });

  it('weights give claims in proportion; a batch claim is shared the same way', async () => {
    const pool = await openDatabase(await freshDatabase(), 2);
    try {
      await migrate(pool);
      await insertQueuedRuns(pool, ids('a', 100), spec('a'));
      await insertQueuedRuns(pool, ids('b', 100), spec('b'));
      await setTenant(pool, 'a', { weight: 3 });
      const claimed = (await claimNextRuns(pool, 'w', 60_000, 40)).map((lease) => tenantOf(lease.runId));
      expect(claimed).toHaveLength(40);
      expect(claimed.filter((tenant) => tenant === 'a')).toHaveLength(30);
      await expect(setTenant(pool, 'a', { weight: 0 })).rejects.toThrow(TenantSettingsError);
    } finally {
      await pool.end();
    }
  });

  it('a tenant at its most runs driven at once is given none, even to eight workers claiming together', async () => {
    const url = await freshDatabase();
    const pool = await openDatabase(url, 2);
    const pools = await Promise.all(Array.from({ length: 8 }, () => openDatabase(url, 1)));
    try {
      await migrate(pool);
      await insertQueuedRuns(pool, ids('a', 50), spec('a'));
      await insertQueuedRuns(pool, ids('b', 50), spec('b'));
      await setTenant(pool, 'a', { maxRunning: 3 });
      const leases = (await Promise.all(pools.map((each, at) => claimNextRuns(each, `w${at}`, 60_000, 4)))).flat();
      const driven = leases.filter((lease) => tenantOf(lease.runId) === 'a');
      expect(driven).toHaveLength(3);
      expect(leases.length).toBeGreaterThan(3);
      expect((await listTenants(pool)).find((tenant) => tenant.name === 'a')).toMatchObject({ maxRunning: 3, driving: 3, queued: 47 });
      // One of its runs let go: one more may be driven.
      await releaseLease(pool, driven[0]!);
      const more = (await claimNextRuns(pool, 'w', 60_000, 20)).filter((lease) => tenantOf(lease.runId) === 'a');
      expect(more).toHaveLength(1);
      // The limit taken away: the next claims give it runs again.
      await setTenant(pool, 'a', { maxRunning: null });
      expect((await claimNextRuns(pool, 'w', 60_000, 30)).some((lease) => tenantOf(lease.runId) === 'a')).toBe(true);
    } finally {
      await Promise.all([pool, ...pools].map((each) => each.end()));
    }
  });

  it("two workers: A queues 2,000 runs, then B 20; every run of B is done before A has 200 done", async () => {
    const url = await freshDatabase();
    const pool = await openDatabase(url, 6);
    try {
      const quick = defineAgent({ name: 'quick', model: scriptedModel([endTurnReply('done')], { name: 'scripted-quick' }), tools: [] });
      await migrate(pool);
      await insertQueuedRuns(pool, ids('a', 2000), spec('a'));
      for (const id of ids('b', 20)) await submitRun(pool, { agent: quick, task: 'For b.', runId: id, tenant: 'b' });
      const workers = [0, 1].map(() => new Worker({ pool, agents: [quick], runConcurrency: 2, leaseMs: 60_000, exitWhenIdle: false, pollIntervalMs: 50, log: () => {} }));
      const running = workers.map((worker) => worker.run());
      // What is asked is when B's last run ends, not A's: the workers stop once B's twenty are done.
      const bDone = async () => (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM da_runs WHERE tenant = 'b' AND state = 'done'`)).rows[0]!.n;
      while ((await bDone()) < 20) await new Promise((resolve) => setTimeout(resolve, 50));
      for (const worker of workers) worker.stop('the last run of B is done');
      await Promise.all(running);
      const { rows } = await pool.query<{ id: string }>(`SELECT id FROM da_runs WHERE state = 'done' ORDER BY updated_at, id`);
      const order = rows.map((row) => tenantOf(row.id));
      expect(order.filter((tenant) => tenant === 'b')).toHaveLength(20);
      const aDoneWhenBFinished = order.slice(0, order.lastIndexOf('b')).filter((tenant) => tenant === 'a').length;
      console.log(`[tenants] runs of A done when the last of B's 20 was: ${aDoneWhenBFinished} of 2,000`);
      expect(aDoneWhenBFinished).toBeLessThan(200);
    } finally {
      await pool.end();
    }
  }, 300_000);

  it('tenant set NAME and tenant list on the command line', async () => {
    const url = await freshDatabase();
    const cli = (args: string[]) => runCliAsync(['tenant', ...args, '--database-url', url], { cwd: tempDir() });
    const set = await cli(['set', 'acme', '--weight', '2', '--max-running', '5']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain('acme: weight 2, at most 5 runs driven at once');
    const list = await cli(['list']);
    expect(list.stdout).toMatch(/^TENANT +WEIGHT +MAX RUNNING +QUEUED +DRIVEN +SPENT THIS MONTH +QUOTA A MONTH +RATE A MINUTE$/m);
    expect(list.stdout).toMatch(/^acme +2 +5 +0 +0 +\$0, 0 tokens +- +-$/m);
    expect((await cli(['set', 'acme', '--no-max-running'])).stdout).toContain('no limit');
    const bad = await cli(['set', 'no way', '--weight', '2']);
    expect(bad.code).toBe(2);
  });
});
