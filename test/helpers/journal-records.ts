/** A plausible journal record for store tests: START at 0, then checkpoint A and B turn by turn. */
import type { JournalRecord } from '../../src/store/journal/journal-record.ts';

export function storeRecord(seq: number, extra: Partial<JournalRecord> = {}): JournalRecord {
  return {
    seq,
    at: 1000 + seq,
    state: seq === 0 ? 'awaitingModel' : seq % 2 ? 'pendingTool' : 'closed',
    event: seq === 0 ? 'START' : seq % 2 ? 'MODEL_REPLY' : 'CLOSE_TURN',
    turn: Math.ceil(seq / 2),
    maxTurns: 10,
    usage: { input: seq, output: seq, cacheRead: 0, cacheWrite: 0 },
    ...extra,
  };
}
