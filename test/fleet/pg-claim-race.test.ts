/**
 * Two claims that overlap give one run to one worker. A claim reads which runs are free, then
 * locks the one it picked; when another claim took that run and committed in between, the lock
 * finds the run's newer row, and what made the run look free must be asked of that row again (a
 * free lease), not of what the claim read before: else both workers drive the run, each sure
 * it holds the lease. The test holds the second claim between its read and its lock (its claim
 * condition waits on an advisory lock the test holds) while the first claim commits.
 */
import { describe, expect, it } from 'vitest';
import { type ClaimCondition, claimNextRuns, claimRun } from '../../src/store/pg/leases.ts';
import { migrate } from '../../src/store/pg/schema.ts';
import { insertQueuedRuns } from '../../src/store/pg/queue.ts';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { freshDatabase, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

const GATE = 424242;

/** A claim condition that waits, once the claim has read the free runs, until the test lets it go on. */
const heldAtTheGate: ClaimCondition = {
  where: () => `(SELECT true FROM (SELECT pg_advisory_lock_shared(${GATE})) AS gate)`,
  params: [],
};

describe.skipIf(!postgresAvailable())('claims that overlap', () => {
  usePostgres({ prefix: 'claim_race' });

  it.each([
    ['one claim at a time', 1],
    ['a batch claim', 4],
  ])('a run claimed and committed while another claim waits between its read and its lock goes to one worker (%s)', async (_, limit) => {
    const url = await freshDatabase();
    const setup = await openDatabase(url, 2);
    const first = await openDatabase(url, 1);
    const second = await openDatabase(url, 1);
    const gate = await setup.connect();
    try {
      await migrate(setup);
      await insertQueuedRuns(setup, ['only-run'], { kind: 'agent', agent: 'quick', task: 'Once.' });
      await gate.query('SELECT pg_advisory_lock($1)', [GATE]);
      const waiting = claimNextRuns(second, 'w2', 60_000, limit, heldAtTheGate, false);
      // The second claim has read the run as free and waits at the gate (its backend shows the lock wait).
      await expect
        .poll(async () => (await setup.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'")).rows[0].n, { timeout: 30_000 })
        .toBe(1);
      const taken = await claimNextRuns(first, 'w1', 60_000, limit, undefined, false);
      expect(taken.map((lease) => lease.runId)).toEqual(['only-run']);
      await gate.query('SELECT pg_advisory_unlock($1)', [GATE]);
      expect(await waiting).toEqual([]);
      const { rows } = await setup.query('SELECT lease_owner, lease_epoch FROM da_runs WHERE id = $1', ['only-run']);
      expect(rows[0]).toEqual({ lease_owner: 'w1', lease_epoch: '1' });
      // A claim of that one run by id is refused while the lease holds.
      expect(await claimRun(second, 'only-run', 'w2', 60_000)).toBeNull();
    } finally {
      gate.release();
      await Promise.all([first.end(), second.end(), setup.end()]);
    }
  }, 60_000);
});
