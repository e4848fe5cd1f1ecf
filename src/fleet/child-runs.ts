/**
 * The runs a fleet run's sub-agent calls make, queued as runs of their own (da_runs, under the id
 * the call derives), so that any worker drives them while the calling run waits without holding
 * a slot: the call notes that its run waits for the child (da_child_waits), its run stops, and a
 * claim leaves it alone until the child has ended (WORKABLE in leases.ts); taken up again, the
 * call is run again and answers with the child's end.
 */
import type { Pool } from 'pg';
import { STOPPED_AT_LIMIT_STATES } from '../../machines/agent-loop.types.ts';
import { foldJournal } from '../store/fold-journal.ts';
import { PgRunStore } from '../store/pg/pg-store.ts';
import type { ChildRuns, QueuedChild } from '../tools/calling-run.ts';
import { submitRun } from './submit-run.ts';

const ENDED_AT_LIMIT: readonly string[] = STOPPED_AT_LIMIT_STATES;

export function fleetChildRuns(pool: Pool, parentRunId: string): ChildRuns {
  return {
    async submit(child: QueuedChild) {
      // The parent's worker drives its agent's sub-agents: the child's agent is registered by it.
      await submitRun(pool, { agent: child.agent, task: child.task, runId: child.runId, calledBy: child.calledBy, ...(child.budget ? { budget: child.budget } : {}), ...(child.traceParent ? { traceParent: child.traceParent } : {}), allowUnknownAgent: true });
      // The first queueing sets when the call gives up: a take-up that queues it again keeps it.
      await pool.query(
        `INSERT INTO da_child_waits (run_id, child_run_id, give_up_at) VALUES ($1, $2, CASE WHEN $3::bigint IS NULL THEN NULL ELSE now() + $3::bigint * interval '1 millisecond' END) ON CONFLICT DO NOTHING`,
        [parentRunId, child.runId, child.timeoutMs ?? null],
      );
    },
    async outcome(childRunId: string) {
      const { rows } = await pool.query<{ state: string | null; finished: boolean | null; records: number | null; gave_up: boolean | null }>(
        `SELECT r.state, r.finished, r.records, w.give_up_at <= now() AS gave_up
           FROM (SELECT 1) AS one LEFT JOIN da_runs r ON r.id = $2 LEFT JOIN da_child_waits w ON w.run_id = $1 AND w.child_run_id = $2`,
        [parentRunId, childRunId],
      );
      const row = rows[0]!;
      const ended = row.state !== null && (row.records ?? 0) > 0 && (row.finished === true || ENDED_AT_LIMIT.includes(row.state));
      if (!ended) return row.gave_up ? { gaveUp: true as const } : null;
      const store = new PgRunStore(pool, childRunId);
      const { state, context } = foldJournal(store.location, await store.load({ fromLastSnapshot: true }));
      return { state, text: context.finalText, failure: context.failure?.message ?? null };
    },
    store: (childRunId) => new PgRunStore(pool, childRunId),
  };
}
