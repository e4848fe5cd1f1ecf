/**
 * A run's events for GET /v1/runs/:id/events (RunEvent of src/client/api-types.ts), drawn from its
 * journal as records are written: each record gives its state, and what it added (the model's
 * reply and its calls, the calls' results, a wait for a person, the end). A reader that had the
 * events of the records up to N gets those after N, none twice: the records are the truth, and
 * whoever writes them next (another worker after a kill) writes them after N too.
 */
import fs from 'node:fs';
import { FINAL_STATES } from '../../machines/agent-loop.types.ts';
import type { RunEvent } from '../client/api-types.ts';
import { categoryOf, waitingOfContext } from '../runtime/run-summary.ts';
import { applyRecord, type DurableView } from '../store/journal/journal-codec.ts';
import type { JournalRecord } from '../store/journal/journal-record.ts';
import type { RunStore, StoredRecord } from '../store/store.ts';
import { endingOfState } from './api-run.ts';

/** The events of one record, sent together under its seq. */
export interface RecordEvents {
  seq: number;
  events: RunEvent[];
}

export const FOLDER_POLL_MS = 100;
export const FLEET_POLL_MS = 250;

export class RunEventTail {
  private view: DurableView | null = null;
  /** The folder journal's size and time when it was last read. */
  private seen: string | null = null;
  /** The last record folded into the view (-1: none). */
  private folded = -1;

  constructor(
    private readonly store: RunStore,
    /** The last record the reader has the events of (-1: none): the tail gives the ones after it. */
    private last: number,
  ) {}

  /** The run rests in a final state and the reader has its last record: nothing more comes. */
  get ended(): boolean {
    return this.view !== null && FINAL_STATES.includes(this.view.state) && this.folded <= this.last;
  }

  /** The events of the records written since the last call; none when nothing was (or the run is not there yet). */
  async next(): Promise<RecordEvents[]> {
    // A folder run's journal is read again only when its size or time changed: a client left on
    // a quiet run costs a stat a poll. A fleet run's is read each poll.
    const signature = this.signature();
    if (signature !== null && signature === this.seen) return [];
    if (!(await this.store.exists())) return [];
    let loaded = await this.store.load({ fromLastSnapshot: true });
    const first = loaded.records[0]?.record.seq ?? 0;
    // The events of a record are told from the view before it: the whole journal is read when the
    // last snapshot is past what this tail has folded (always at its first look, once).
    if (first > this.folded + 1) loaded = await this.store.load();
    const fresh: RecordEvents[] = [];
    for (const stored of loaded.records) {
      if (stored.record.seq <= this.folded) continue;
      const events = this.apply(stored);
      if (stored.record.seq > this.last) fresh.push({ seq: stored.record.seq, events });
    }
    if (fresh.length) this.last = fresh[fresh.length - 1]!.seq;
    this.seen = signature;
    return fresh;
  }

  private signature(): string | null {
    const file = this.store.journalPath;
    if (!file) return null;
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    return stat ? `${stat.size}:${stat.mtimeMs}` : null;
  }

  private apply(stored: StoredRecord): RunEvent[] {
    const { record } = stored;
    const before = this.view;
    const messagesBefore = before?.context.messages.length ?? 0;
    const newResults = (record.results?.add ?? []).filter((outcome) => !before?.ledger.has(outcome.tool_use_id));
    this.view = applyRecord(this.view, record);
    this.folded = record.seq;
    return eventsOf(record, this.view, record.snapshot ? messagesBefore : Math.min(messagesBefore, record.messages?.from ?? messagesBefore), newResults);
  }
}

/** The events a record makes, the view folded up to it. */
export function eventsOf(record: JournalRecord, view: DurableView, newMessagesFrom: number, newResults: NonNullable<JournalRecord['results']>['add']): RunEvent[] {
  const { seq } = record;
  const { context, state } = view;
  const events: RunEvent[] = [{ type: 'state', seq, at: record.at, state, turn: context.turn }];
  if (record.event === 'MODEL_REPLY' || record.event === 'MODEL_REPLY_INVALID') {
    for (const message of context.messages.slice(newMessagesFrom)) {
      if (message.role !== 'assistant') continue;
      const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
      const text = blocks.flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [block.text] : [])).join('');
      events.push({ type: 'reply', seq, text, supersedesDeltas: true });
      for (const block of blocks) {
        if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
          events.push({ type: 'tool-call', seq, toolUseId: block.id, name: block.name, input: block.input });
        }
      }
    }
  }
  for (const outcome of newResults) events.push({ type: 'tool-result', seq, toolUseId: outcome.tool_use_id, isError: outcome.is_error, content: outcome.content });
  if (record.awaiting) {
    const waiting = waitingOfContext(context);
    if (waiting) events.push({ type: 'waiting', seq, waitingOn: { ...waiting.waitingOn }, waitsFor: waiting.waitsFor });
  }
  if (FINAL_STATES.includes(state)) {
    const ending = endingOfState(state, context);
    events.push({ type: 'end', seq, state, category: categoryOf(state, false), result: ending.result, problem: ending.problem });
  }
  return events;
}
