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
import { type PgInboxTable, PgKeyedInbox } from './pg-keyed-inbox.ts';

const DECISIONS: PgInboxTable = {
  table: 'da_decisions',
  keyColumn: 'tool_use_id',
  entryColumn: 'decision',
  unsettled: 'settled_at IS NULL',
  problem: decisionProblem,
};

export class PgDecisionInbox implements DecisionInbox {
  private readonly inbox: PgKeyedInbox<Decision>;

  constructor(
    private readonly pool: Pool,
    private readonly runId: string,
    /** The writer's lease, when this process drives the run (settle is fenced by it). */
    private readonly lease: () => Lease | null,
  ) {
    this.inbox = new PgKeyedInbox(pool, runId, DECISIONS);
  }

  write(decision: InboxDecision): Promise<'written' | 'exists'> {
    return this.inbox.insert(decision.tool_use_id, decision);
  }

  /** The decisions not yet settled. */
  read(): Promise<InboxDecision[]> {
    return this.inbox.entries();
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
