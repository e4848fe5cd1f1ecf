/**
 * Every decision of a run, read from its journal: who decided which call, how, when, and how
 * long the call waited for it. The snapshot keeps only the open turn's decisions (a turn that
 * opens empties them); the trail keeps the whole run, for `status`, `pending` and the visualizer.
 * Pure: fed one folded record at a time.
 */
import type { AgentContext, Decision, DecisionNeed } from '../../machines/agent-loop.types.ts';
import type { JournalRecord } from '../store/journal/journal-record.ts';

export interface DecidedCall extends Decision {
  /** The tool the call is to. */
  name: string;
  needs: DecisionNeed;
  turn: number;
  /** The DECISION record that made it durable. */
  seq: number;
  /** When the call began to wait (its DECISION_NEEDED record), or null when the journal does not say. */
  since: number | null;
  /** How long it waited: from `since` to the DECISION record (null when `since` is). */
  waitedMs: number | null;
}

export class DecisionTrail {
  readonly decided: DecidedCall[] = [];
  /** When each call began to wait, from its DECISION_NEEDED record. */
  private readonly waitingSince = new Map<string, number>();

  /** Feeds one record with the context it left (as foldJournal gives them). */
  add(record: JournalRecord, context: AgentContext): void {
    if (record.event === 'DECISION_NEEDED' && context.awaiting) this.waitingSince.set(context.awaiting.tool_use_id, context.awaiting.since);
    if (record.event !== 'DECISION') return;
    for (const decision of record.decisions?.add ?? []) {
      const call = context.pending.find((pending) => pending.id === decision.tool_use_id);
      const since = this.waitingSince.get(decision.tool_use_id) ?? null;
      this.decided.push({
        ...decision,
        name: call?.name ?? '?',
        needs: call?.needs ?? (decision.verdict === 'answered' ? 'answer' : 'approval'),
        turn: context.turn,
        seq: record.seq,
        since,
        waitedMs: since === null ? null : Math.max(0, record.at - since),
      });
    }
  }
}

/** "approved by ana", "denied by deadline: no decision within 15m", "answered by bo: Tuesday". */
export function verdictWords(decision: Decision): string {
  const note = decision.note ? ` (note: ${decision.note})` : '';
  switch (decision.verdict) {
    case 'approved':
      return `approved by ${decision.by}${decision.input !== undefined ? ` with edited input ${JSON.stringify(decision.input)}` : ''}${note}`;
    case 'denied':
      return `denied by ${decision.by}: ${decision.reason ?? ''}${note}`;
    case 'answered':
      return `answered by ${decision.by}: ${decision.text ?? ''}${note}`;
  }
}
