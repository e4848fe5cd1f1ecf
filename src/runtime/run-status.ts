/**
 * Where a run stands and what it did, read from its store alone. Reading takes no lock and
 * changes nothing, so it is safe while another process drives the run.
 */
import { openCalls } from '../../machines/agent-loop.logic.ts';
import type { AgentStateName, RunFailure, TokenUsage } from '../../machines/agent-loop.types.ts';
import { waitingCallsOf } from '../approval/waiting-calls.ts';
import { foldJournal } from '../store/fold-journal.ts';
import type { WaitingCall } from './run-events.ts';
import type { RecordEvent, RecordNote } from '../store/journal-record.ts';
import type { PointName } from '../store/record-points.ts';
import { pointOf } from '../store/record-points.ts';
import type { RecoveredTornTail, RunStore } from '../store/store.ts';

export interface PendingCallStatus {
  id: string;
  name: string;
  recorded: boolean;
}

export interface RunStatus {
  runId: string;
  location: string;
  task: string;
  state: AgentStateName;
  turn: number;
  maxTurns: number;
  pending: PendingCallStatus[];
  /** The calls that wait for a person's decision: the awaited one with since when, then the rest of its turn. */
  waiting: WaitingCall[];
  ledgerEntries: number;
  usage: TokenUsage;
  finalText: string | null;
  failure: RunFailure | null;
  lastSave: { seq: number; point: PointName; at: number; bytes: number };
  records: number;
  journalBytes: number;
  /** A record cut off by a crash, which a resume will drop. */
  tornTail: RecoveredTornTail | null;
}

export interface HistoryStep {
  seq: number;
  at: number;
  point: PointName;
  state: AgentStateName;
  event: RecordEvent;
  turn: number;
  bytes: number;
  pending: string[];
  ledgerEntries: number;
  note: RecordNote | null;
}

export async function readRunStatus(store: RunStore): Promise<RunStatus> {
  const loaded = await store.load();
  const view = foldJournal(store.location, loaded);
  const last = loaded.records[loaded.records.length - 1]!;
  const open = new Set(openCalls(view.context).map((call) => call.id));
  return {
    runId: loaded.header.runId,
    location: store.location,
    task: view.context.task,
    state: view.state,
    turn: view.context.turn,
    maxTurns: view.context.maxTurns,
    pending: view.context.pending.map((call) => ({ id: call.id, name: call.name, recorded: !open.has(call.id) })),
    waiting: waitingCallsOf(loaded.header.runId, view.context),
    ledgerEntries: view.ledger.size,
    usage: view.context.usage,
    finalText: view.context.finalText,
    failure: view.context.failure,
    lastSave: { seq: last.record.seq, point: pointOf(last.record), at: last.record.at, bytes: last.bytes },
    records: loaded.records.length,
    journalBytes: loaded.totalBytes,
    tornTail: loaded.tornTail,
  };
}

export async function readRunHistory(store: RunStore): Promise<HistoryStep[]> {
  const loaded = await store.load();
  const steps: HistoryStep[] = [];
  foldJournal(store.location, loaded, (view, stored) => {
    const { record } = stored;
    steps.push({
      seq: record.seq,
      at: record.at,
      point: pointOf(record),
      state: record.state,
      event: record.event,
      turn: view.context.turn,
      bytes: stored.bytes,
      pending: view.context.pending.map((call) => call.name),
      ledgerEntries: view.ledger.size,
      note: record.note ?? null,
    });
  });
  return steps;
}
