/**
 * Every persisted transition is a named point: what just became durable. The crash harness
 * counts them (`after-save-a:3`), the plain log and the history print them.
 */
import type { JournalRecord } from './journal-record.ts';

export type PointName =
  | 'save-start'
  | 'save-reopen'
  | 'model-reply'
  | 'save-a'
  | 'effect-write'
  | 'save-b'
  | 'save-waiting'
  | 'save-decision'
  | 'save-pause'
  | 'save-done'
  | 'save-max-turns'
  | 'save-failed'
  | 'save-cancelled'
  | 'save-budget'
  | 'save-compacting'
  | 'save-compacted';

/** Every point name, in the order a turn passes them (for messages that list them). */
export const POINT_NAMES: readonly PointName[] = [
  'save-start',
  'model-reply',
  'save-a',
  'save-waiting',
  'save-decision',
  'effect-write',
  'save-b',
  'save-pause',
  'save-done',
  'save-max-turns',
  'save-failed',
  'save-reopen',
  'save-cancelled',
  'save-budget',
  'save-compacting',
  'save-compacted',
];

export function pointOf(record: Pick<JournalRecord, 'event' | 'state'>): PointName {
  switch (record.event) {
    case 'START':
      return 'save-start';
    case 'REOPEN':
      return 'save-reopen';
    case 'MODEL_USAGE':
      return 'model-reply';
    case 'TOOL_RESULT':
      return 'effect-write';
    case 'CLOSE_TURN':
      return 'save-b';
    case 'DECISION_NEEDED':
      return 'save-waiting';
    case 'DECISION':
      return 'save-decision';
    case 'CANCEL':
      return 'save-cancelled';
    case 'BUDGET_REACHED':
      return 'save-budget';
    case 'COMPACT':
      return 'save-compacting';
    case 'COMPACTED':
      return 'save-compacted';
    case 'MODEL_REPLY':
    case 'MODEL_REPLY_INVALID':
      switch (record.state) {
        case 'pendingTool':
          return 'save-a';
        case 'awaitingModel':
          return 'save-pause';
        case 'done':
          return 'save-done';
        case 'stoppedAtMaxTurns':
          return 'save-max-turns';
        default:
          return 'save-failed';
      }
  }
}

/** A point in words, for messages: "checkpoint A", "the ledger entry". */
export function describePoint(point: PointName): string {
  switch (point) {
    case 'effect-write':
      return 'the ledger entry';
    case 'save-a':
      return 'checkpoint A';
    case 'save-b':
      return 'checkpoint B';
    case 'save-waiting':
      return 'the wait for a decision';
    case 'save-decision':
      return 'the decision';
    case 'save-compacting':
      return 'the start of a compaction';
    case 'save-compacted':
      return 'the compacted context';
    default:
      return point;
  }
}
