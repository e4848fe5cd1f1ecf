/**
 * Leases on runs: who drives a run, until when, under which epoch. Every claim bumps the epoch;
 * every write of a run carries the epoch it was made under and is refused once a newer lease
 * exists (fencing), so a worker that was frozen past its lease cannot write a thing.
 */
import type { Pool } from 'pg';
import { inTransaction } from './transaction.ts';
import { STOPPED_AT_LIMIT_STATES } from '../../../machines/agent-loop.types.ts';
import { LeaseLostError } from './pg-errors.ts';
import { WAKE_DUE } from './pg-signal-inbox.ts';

export interface Lease {
  runId: string;
  owner: string;
  epoch: number;
  /** Set when the claim took the run from a holder whose lease had expired (it died or froze). */
  takenFrom?: { owner: string; expiredAt: string } | null;
  /** The run's record count when claimed (no one else writes it while the lease holds): saves asking. */
  records?: number;
  /** The run's spec, read by the claim itself. */
  spec?: unknown;
  /** The raise of its limits an operator asked for (da_controls, kind 'raise'), read by the claim itself; null: none. */
  raise?: unknown;
}

/** The states of a run stopped at a limit, as an SQL list. */
export const STOPPED_AT_LIMIT = STOPPED_AT_LIMIT_STATES.map((state) => `'${state}'`).join(', ');

/**
 * A run that waits in awaitingDecision is not claimable until there is something to do: a
 * decision for the call it waits for (a person's, or the end of the child run the call queued,
 * delivered there); for a call that waits for a person, that call's deadline (pinned in the
 * header) passed; for a wait call, its time came or a signal of its event is there (WAKE_DUE);
 * for a call that waits for its child, the call's time to wait ran out (WAKE_DUE too) or the
 * child ended without its end delivered (its worker died in between); and one whose worker died
 * while it waited, before it said what for (its lease expired, not released: no da_waits row), is
 * taken up once to look. A run stopped at a limit is not claimable until an operator raised it
 * (durable-agent raise). A paused run is not claimable until its pause is cleared (durable-agent
 * unpause --run). A run with a child still going on (da_child_waits) is not claimable until the
 * child has ended or the call gives up on it (give_up_at): the children of one reply are awaited
 * in the model's order, so the run is taken up once, when all of them have ended, instead of once
 * for each (and a run recorded by a release before child awaits, stopped in the middle of such a
 * turn, is left alone the same way).
 */
export const WORKABLE = `((da_runs.state <> 'awaitingDecision'
   OR EXISTS (SELECT 1 FROM da_decisions d WHERE d.run_id = da_runs.id AND d.tool_use_id = da_runs.awaiting AND d.settled_at IS NULL)
   OR (da_runs.awaiting_since + (da_runs.header #>> '{decisionPolicy,decisionTimeoutMs}')::bigint * interval '1 millisecond' <= now()
       AND NOT EXISTS (SELECT 1 FROM da_waits w WHERE w.run_id = da_runs.id AND w.tool_use_id = da_runs.awaiting))
   OR ${WAKE_DUE}
   OR EXISTS (SELECT 1 FROM da_child_waits cw JOIN da_runs child ON child.id = cw.child_run_id
               WHERE cw.run_id = da_runs.id AND child.spec #>> '{calledBy,toolUseId}' = da_runs.awaiting
                 AND (child.finished OR child.state IN (${STOPPED_AT_LIMIT})))
   OR (da_runs.lease_owner IS NOT NULL AND NOT EXISTS (SELECT 1 FROM da_waits w WHERE w.run_id = da_runs.id AND w.tool_use_id = da_runs.awaiting)))
  AND (da_runs.state NOT IN (${STOPPED_AT_LIMIT})
   OR EXISTS (SELECT 1 FROM da_controls c WHERE c.run_id = da_runs.id AND c.kind = 'raise'))
  AND NOT EXISTS (SELECT 1 FROM da_controls c WHERE c.run_id = da_runs.id AND c.kind = 'pause')
  AND NOT EXISTS (SELECT 1 FROM da_child_waits cw JOIN da_runs child ON child.id = cw.child_run_id
                   WHERE cw.run_id = da_runs.id AND NOT child.finished AND child.state NOT IN (${STOPPED_AT_LIMIT})
                     AND (cw.give_up_at IS NULL OR cw.give_up_at > now())))`;

/** A condition a claim adds, for what the claimer can drive: SQL over da_runs, its parameters numbered from `first` on. */
export interface ClaimCondition {
  where(first: number): string;
  params: readonly unknown[];
}

/** Claims the oldest unfinished run whose lease is free or expired and that has work to do; null when there is none. */
export async function claimNextRun(pool: Pool, owner: string, leaseMs: number, only?: ClaimCondition): Promise<Lease | null> {
  return (await claimNextRuns(pool, owner, leaseMs, 1, only))[0] ?? null;
}

/**
 * Claims up to `limit` such runs in one statement (a worker with several free slots fills them at
 * once), shared among the tenants with work by their weight: each tenant's runs in the queue's
 * order, a tenant's next run ranked by the runs it drives and has been given so far over its
 * weight (weighted round robin), so a tenant with ten thousand queued runs delays another's
 * first by a claim or two. A tenant at its most runs driven at once (da_tenants.max_running) is
 * given none; where any tenant has such a limit, claims take turns (a lock for the claim's
 * transaction), so that two workers claiming at once cannot both take its last slot.
 * `takeTurns`: whether they must, as the caller last looked (a worker's look at the fleet);
 * absent, read here (and remembered for a while).
 */
export async function claimNextRuns(pool: Pool, owner: string, leaseMs: number, limit: number, only?: ClaimCondition, takeTurns?: boolean): Promise<Lease[]> {
  const params = only ? [owner, leaseMs, limit, ...only.params] : [owner, leaseMs, limit];
  const { rows } = (takeTurns ?? (await tenantLimitsSet(pool)))
    ? await inTransaction(pool, async (client) => {
        await client.query("SELECT pg_advisory_xact_lock(hashtext('durable-agent claim'))");
        return client.query<ClaimedRow>(claimStatement(only), params);
      })
    : await pool.query<ClaimedRow>(claimStatement(only), params);
  return rows.map((row) => {
    const takenFrom = row.previous_owner ? { owner: row.previous_owner, expiredAt: row.previous_expiry?.toISOString() ?? '?' } : null;
    return { runId: row.id, owner, epoch: Number(row.lease_epoch), takenFrom, records: row.records, spec: row.spec, raise: row.raise };
  });
}

interface ClaimedRow {
  id: string;
  lease_epoch: string;
  records: number;
  spec: unknown;
  raise: unknown;
  previous_owner: string | null;
  previous_expiry: Date | null;
}

function claimStatement(only: ClaimCondition | undefined): string {
  // A released lease has no owner: an owner left on a claimable run is a holder whose lease expired.
  // A lease runs from when it is granted (clock_timestamp), not from its transaction's start
  // (now()): a claim that waited (a busy server, the claims' turn lock) gets its whole lease.
  // The lease is free as `c` read it, and again on `r`: a claim that committed between this
  // statement's read and its row lock leaves a newer row, and only conditions on `r` are asked of
  // that row again (without them, both claims take the run).
  // The statement begins with its UPDATE (what an operator sees of it in pg_stat_activity, cut at 1 kB).
  return `UPDATE da_runs SET lease_owner = $1, lease_epoch = da_runs.lease_epoch + 1,
            lease_expires_at = clock_timestamp() + $2 * interval '1 millisecond', updated_at = now()
       FROM (
        SELECT r.id, r.lease_owner AS previous_owner, r.lease_expires_at AS previous_expiry
          FROM (
            SELECT id, tenant, created_at, row_number() OVER (PARTITION BY tenant ORDER BY created_at, id) AS place FROM da_runs
             WHERE NOT finished AND (lease_expires_at IS NULL OR lease_expires_at < now()) AND ${WORKABLE}${only ? ` AND ${only.where(4)}` : ''}
          ) AS c
          JOIN da_runs r ON r.id = c.id
          LEFT JOIN (SELECT tenant, count(*) AS runs FROM da_runs WHERE NOT finished AND lease_expires_at > now() GROUP BY tenant) AS d ON d.tenant = c.tenant
          LEFT JOIN da_tenants t ON t.name = c.tenant
         WHERE c.place <= $3 AND (t.max_running IS NULL OR coalesce(d.runs, 0) + c.place <= t.max_running)
           AND NOT r.finished AND (r.lease_expires_at IS NULL OR r.lease_expires_at < now())
         ORDER BY (coalesce(d.runs, 0) + c.place)::float8 / coalesce(t.weight, 1), c.created_at, c.id
         FOR UPDATE OF r SKIP LOCKED
         LIMIT $3) AS previous
      WHERE da_runs.id = previous.id
      RETURNING da_runs.id, da_runs.lease_epoch, da_runs.records, da_runs.spec,
                (SELECT c.request FROM da_controls c WHERE c.run_id = da_runs.id AND c.kind = 'raise') AS raise,
                previous.previous_owner, previous.previous_expiry`;
}

/** How long a pool trusts what it read of the tenants' limits: a limit set takes hold within this. */
const LIMITS_READ_FOR_MS = 2_000;
const limitsRead = new WeakMap<Pool, { at: number; set: Promise<boolean> }>();

/** Whether some tenant has a most of runs driven at once (read again every LIMITS_READ_FOR_MS). */
function tenantLimitsSet(pool: Pool): Promise<boolean> {
  const read = limitsRead.get(pool);
  if (read && Date.now() - read.at < LIMITS_READ_FOR_MS) return read.set;
  const set = pool.query<{ set: boolean }>('SELECT EXISTS (SELECT 1 FROM da_tenants WHERE max_running IS NOT NULL) AS set').then(
    ({ rows }) => rows[0]?.set === true,
    // Read again at the next claim rather than remember a failure.
    (error: unknown) => {
      limitsRead.delete(pool);
      throw error;
    },
  );
  limitsRead.set(pool, { at: Date.now(), set });
  return set;
}

/** Forgets what a pool read of the tenants' limits: the next claim reads them again (a limit just set). */
export function forgetTenantLimits(pool: Pool): void {
  limitsRead.delete(pool);
}

/** Claims one given run if its lease is free or expired; null when someone else holds it. */
export async function claimRun(pool: Pool, runId: string, owner: string, leaseMs: number): Promise<Lease | null> {
  const { rows } = await pool.query<{ lease_epoch: string }>(
    `UPDATE da_runs SET lease_owner = $2, lease_epoch = lease_epoch + 1,
            lease_expires_at = clock_timestamp() + $3 * interval '1 millisecond', updated_at = now()
      WHERE id = $1 AND (lease_expires_at IS NULL OR lease_expires_at < now())
      RETURNING lease_epoch`,
    [runId, owner, leaseMs],
  );
  const row = rows[0];
  return row ? { runId, owner, epoch: Number(row.lease_epoch) } : null;
}

/**
 * Extends a lease; false when it was lost (taken over, or the run is gone) or released: a renewal
 * still under way when its holder released the lease must not give the run an expiry again.
 */
export async function renewLease(pool: Pool, lease: Lease, leaseMs: number): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE da_runs SET lease_expires_at = clock_timestamp() + $3 * interval '1 millisecond'
      WHERE id = $1 AND lease_epoch = $2 AND lease_owner IS NOT NULL`,
    [lease.runId, lease.epoch, leaseMs],
  );
  return rowCount === 1;
}

export async function releaseLease(pool: Pool, lease: Pick<Lease, 'runId' | 'epoch' | 'owner'>): Promise<void> {
  await pool.query(
    `UPDATE da_runs SET lease_owner = NULL, lease_expires_at = NULL WHERE id = $1 AND lease_epoch = $2`,
    [lease.runId, lease.epoch],
  );
}

/** Several releases in one statement, each under its own epoch (a lease taken over meanwhile is left as it is). */
export async function releaseLeases(pool: Pool, leases: ReadonlyArray<Pick<Lease, 'runId' | 'epoch' | 'owner'>>): Promise<void> {
  if (leases.length === 1) return releaseLease(pool, leases[0]!);
  await pool.query(
    `UPDATE da_runs SET lease_owner = NULL, lease_expires_at = NULL
       FROM unnest($1::text[], $2::bigint[]) AS released(run_id, epoch)
      WHERE da_runs.id = released.run_id AND da_runs.lease_epoch = released.epoch`,
    [leases.map((lease) => lease.runId), leases.map((lease) => lease.epoch)],
  );
}

/** Throws LeaseLostError unless the lease is still the run's current one. */
export async function assertLease(pool: Pool, lease: Lease): Promise<void> {
  const { rows } = await pool.query<LeaseRow>('SELECT lease_epoch, lease_owner, records FROM da_runs WHERE id = $1', [lease.runId]);
  currentLeaseRow(lease, rows[0]);
}

interface LeaseRow {
  lease_epoch: string;
  lease_owner: string | null;
  records: number;
}

function currentLeaseRow(lease: Lease, row: LeaseRow | undefined): LeaseRow {
  if (!row || Number(row.lease_epoch) !== lease.epoch) {
    throw new LeaseLostError(lease.runId, lease.epoch, row ? Number(row.lease_epoch) : null, row?.lease_owner ?? null);
  }
  return row;
}

/**
 * Keeps a lease alive while a run is driven: renews it every third of its length and reports
 * once if it is lost (so the driver can stop at the next step rather than at its next write).
 */
export class LeaseKeeper {
  private timer: NodeJS.Timeout | null = null;
  private lost = false;

  constructor(
    private readonly pool: Pool,
    readonly lease: Lease,
    private readonly leaseMs: number,
    private readonly onLost: (error: LeaseLostError) => void,
  ) {}

  start(): this {
    this.timer = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  get isLost(): boolean {
    return this.lost;
  }

  private async renew(): Promise<void> {
    if (this.lost) return;
    try {
      if (await renewLease(this.pool, this.lease, this.leaseMs)) return;
    } catch {
      return; // the database is unreachable for now: the next renewal tries again; writes are fenced anyway
    }
    if (!this.timer) return; // stopped meanwhile: the holder let go of the lease itself
    this.lost = true;
    this.stop();
    this.onLost(new LeaseLostError(this.lease.runId, this.lease.epoch, null, null));
  }
}
