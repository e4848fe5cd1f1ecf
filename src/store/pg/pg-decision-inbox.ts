/**
 * The decisions inbox of a run in PostgreSQL: one row per (run_id, tool_use_id), inserted whole
 * in one statement (the primary key makes a second decision for the call 'exists'). The run's
 * writer settles a row once its DECISION record is committed, under its lease: a worker that
 * lost its lease settles nothing. Settled rows stay, as a record of who decided what, and move
 * with the run when it is archived.
 */
import type { Pool } from 'pg';
import type { Decision } from '../../../machines/agent-loop.types.ts';
import { type DecisionInbox, decisionProblem, type InboxDecision } from '../inbox/inboxes.ts';
import type { Lease } from './leases.ts';

export class PgDecisionInbox implements DecisionInbox {
  constructor(
    private readonly pool: Pool,
    private readonly runId: string,
    /** The writer's lease, when this process drives the run (settle is fenced by it). */
    private readonly lease: () => Lease | null,
  ) {}

  async write(decision: InboxDecision): Promise<'written' | 'exists'> {
    const { rowCount } = await this.pool.query(
      'INSERT INTO da_decisions (run_id, tool_use_id, decision) VALUES ($1, $2, $3) ON CONFLICT (run_id, tool_use_id) DO NOTHING',
      [this.runId, decision.tool_use_id, JSON.stringify(decision)],
    );
    return rowCount === 1 ? 'written' : 'exists';
  }

  /** The decisions not yet settled; a row written by hand (or by a broken program) that is not a whole decision is left out. */
  async read(): Promise<InboxDecision[]> {
    const { rows } = await this.pool.query<{ tool_use_id: string; decision: unknown }>(
      'SELECT tool_use_id, decision FROM da_decisions WHERE run_id = $1 AND settled_at IS NULL',
      [this.runId],
    );
    return rows.filter((row) => decisionProblem(row.decision, row.tool_use_id) === null).map((row) => row.decision as Decision);
  }

  async settle(tool_use_id: string): Promise<void> {
    const lease = this.lease();
    if (!lease) return;
    await this.pool.query(
      `UPDATE da_decisions SET settled_at = now()
        WHERE run_id = $1 AND tool_use_id = $2 AND settled_at IS NULL
          AND EXISTS (SELECT 1 FROM da_runs WHERE id = $1 AND lease_epoch = $3)`,
      [this.runId, tool_use_id, lease.epoch],
    );
  }
}
