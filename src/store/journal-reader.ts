/** Checks a journal's framed lines and turns them into a header and records, or refuses it. */
import type { AgentStateName } from '../../machines/agent-loop.types.ts';
import { StoreCorruptError, StoreVersionError } from './errors.ts';
import type { FramedJournal } from './framing.ts';
import type { JournalHeader, JournalRecord, RecordEvent } from './journal-record.ts';
import { JOURNAL_FORMAT, JOURNAL_VERSION } from './journal-record.ts';
import type { StoredRecord } from './store.ts';

const STATES = new Set<AgentStateName>([
  'awaitingModel',
  'pendingTool',
  'effectRecorded',
  'closed',
  'done',
  'stoppedAtMaxTurns',
  'failed',
]);
const EVENTS = new Set<RecordEvent>(['START', 'REOPEN', 'MODEL_REPLY', 'MODEL_REPLY_INVALID', 'TOOL_RESULT', 'CLOSE_TURN']);

export function journalFromFrames(location: string, framed: FramedJournal): { header: JournalHeader; records: StoredRecord[] } {
  const [first, ...rest] = framed.lines;
  if (!first) throw new StoreCorruptError(location, 1, 0, 'the journal has no header line');
  const header = first.document as Partial<JournalHeader> | null;
  if (!header || typeof header !== 'object' || header.format !== JOURNAL_FORMAT) {
    throw new StoreCorruptError(location, 1, 0, `the first line is not a ${JOURNAL_FORMAT} header`);
  }
  if (header.version !== JOURNAL_VERSION) throw new StoreVersionError(location, header.version, JOURNAL_VERSION);
  if (typeof header.runId !== 'string') throw new StoreCorruptError(location, 1, 0, 'the header has no run id');

  const records: StoredRecord[] = [];
  rest.forEach((line, index) => {
    const problem = recordProblem(line.document, index);
    if (problem) throw new StoreCorruptError(location, index + 2, line.offset, problem);
    records.push({ record: line.document as JournalRecord, bytes: line.bytes, offset: line.offset });
  });
  if (records.length === 0) throw new StoreCorruptError(location, 2, first.bytes, 'the journal holds a header but no record');
  return { header: header as JournalHeader, records };
}

function recordProblem(document: unknown, index: number): string | null {
  if (!document || typeof document !== 'object') return 'the line is not a record';
  const record = document as Partial<JournalRecord>;
  if (record.seq !== index) return `record number ${String(record.seq)} where ${index} was expected (a record is missing or repeated)`;
  if (!STATES.has(record.state as AgentStateName)) return `unknown state ${JSON.stringify(record.state)}`;
  if (!EVENTS.has(record.event as RecordEvent)) return `unknown event ${JSON.stringify(record.event)}`;
  if (typeof record.turn !== 'number' || typeof record.maxTurns !== 'number' || typeof record.usage !== 'object') {
    return 'the record lacks its turn, max turns or usage';
  }
  return null;
}
