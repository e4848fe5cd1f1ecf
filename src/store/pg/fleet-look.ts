/**
 * What a worker looks at now and then besides the queue, in one statement: whether a schedule's
 * tick is due by the database's clock (and the earliest tick), and whether some tenant has a
 * most of runs driven at once (then claims take turns: leases.ts).
 */
import type { Database } from './pool.ts';

export interface FleetLook {
  /** A tick of some schedule not paused is due now. */
  schedulesDue: boolean;
  /** The earliest tick of a schedule not paused; null: none. */
  nextTick: Date | null;
  /** Some tenant has a most of runs driven at once. */
  tenantLimits: boolean;
}

export async function lookAtFleet(db: Database): Promise<FleetLook> {
  const { rows } = await db.query<{ next: Date | null; due: boolean; limits: boolean }>(
    `SELECT min(next_tick_at) AS next, coalesce(min(next_tick_at) <= clock_timestamp(), false) AS due,
            EXISTS (SELECT 1 FROM da_tenants WHERE max_running IS NOT NULL) AS limits
       FROM da_schedules WHERE NOT paused`,
  );
  return { schedulesDue: rows[0]?.due === true, nextTick: rows[0]?.next ?? null, tenantLimits: rows[0]?.limits === true };
}
