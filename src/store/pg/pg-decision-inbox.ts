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
import { isSealedRecord, openDecisionContent, sealDecisionContent } from '../../seal/record-content.ts';
import type { ValueOpener, ValueSealer } from '../../seal/value-codec.ts';
import { noKeys, type PgInboxTable, PgKeyedInbox } from './pg-keyed-inbox.ts';

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
    /** The run's sealer and opener for what it keeps outside its records, when it is sealed (run-sealing.ts: valuesFor), or its key kept before its first record (valuesBeforeCreate). */
    values: () => Promise<{ sealer: ValueSealer; opener: ValueOpener } | null> = async () => null,
    /** The run's key as its row keeps it (the wrap), opened: for a run sealed in after this store took it for plain (run-sealing.ts: valuesWithWrap). */
    sealedMeanwhile: (runKey: unknown) => Promise<{ sealer: ValueSealer; opener: ValueOpener }> = noKeys(runId),
  ) {
    // A sealed run's decisions wait sealed: their notes, reasons, edited inputs and answers are a person's words.
    this.inbox = new PgKeyedInbox<Decision>(pool, runId, DECISIONS, {
      keep: async (decision) => {
        const codec = await values();
        return codec ? { kept: sealDecisionContent(decision, codec.sealer), plain: false } : { kept: decision, plain: true };
      },
      keepSealed: async (decision, runKey) => sealDecisionContent(decision, (await sealedMeanwhile(runKey)).sealer),
      read: async (kept) => {
        if (!isSealedRecord(kept as object)) return kept;
        // Unreadable without the run's key: left out, as a row that is not a whole decision is.
        let codec: Awaited<ReturnType<typeof values>>;
        try {
          codec = await values();
        } catch {
          return null;
        }
        return codec ? openDecisionContent(kept, codec.opener) : null;
      },
    });
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
