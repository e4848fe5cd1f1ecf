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
import type { ChildOutcome, ChildRuns, QueuedChild } from '../tools/calling-run.ts';
import { submitRun } from './submit-run.ts';

const ENDED_AT_LIMIT: readonly string[] = STOPPED_AT_LIMIT_STATES;

export function fleetChildRuns(pool: Pool, parentRunId: string): ChildRuns {
  return {
    async submit(child: QueuedChild) {
      // The parent's worker drives its agent's sub-agents: the child's agent is registered by it.
      await submitRun(pool, { agent: child.agent, task: child.task, runId: child.runId, calledBy: child.calledBy, ...(child.budget ? { budget: child.budget } : {}), ...(child.traceParent ? { traceParent: child.traceParent } : {}), allowUnknownAgent: true });
      await pool.query('INSERT INTO da_child_waits (run_id, child_run_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [parentRunId, child.runId]);
    },
    async outcome(childRunId: string): Promise<ChildOutcome | null> {
      const { rows } = await pool.query<{ state: string; finished: boolean; records: number }>('SELECT state, finished, records FROM da_runs WHERE id = $1', [childRunId]);
      const row = rows[0];
      if (!row || row.records === 0 || !(row.finished || ENDED_AT_LIMIT.includes(row.state))) return null;
      const store = new PgRunStore(pool, childRunId);
      const { state, context } = foldJournal(store.location, await store.load({ fromLastSnapshot: true }));
      return { state, text: context.finalText, failure: context.failure?.message ?? null };
    },
    store: (childRunId) => new PgRunStore(pool, childRunId),
  };
}
