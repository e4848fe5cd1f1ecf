/**
 * A store that keeps the journal in memory: for tests of the loop's logic and to measure the
 * loop without persistence. It is not durable and says so in its location.
 */
import { StoreMissingError } from './errors.ts';
import { checksumOf, documentJson } from './journal/framing.ts';
import type { JournalHeader, JournalRecord } from './journal/journal-record.ts';
import type { AppendReceipt, DecisionInbox, InboxDecision, LoadedRun, LoadOptions, RunLock, RunStore, StoredRecord } from './store.ts';

/** The in-memory inbox: decisions by tool_use_id, copied in and out so a caller cannot change one later. */
export class MemoryDecisionInbox implements DecisionInbox {
  private readonly entries = new Map<string, InboxDecision>();

  async write(decision: InboxDecision): Promise<'written' | 'exists'> {
    if (this.entries.has(decision.tool_use_id)) return 'exists';
    this.entries.set(decision.tool_use_id, structuredClone(decision));
    return 'written';
  }

  async read(): Promise<InboxDecision[]> {
    return [...this.entries.values()].map((decision) => structuredClone(decision));
  }

  async settle(tool_use_id: string): Promise<void> {
    this.entries.delete(tool_use_id);
  }
}

/** Where a load from the last snapshot starts: the last record holding one, else record 0. */
function lastSnapshotIndex(records: readonly StoredRecord[]): number {
  for (let index = records.length - 1; index > 0; index--) if (records[index]!.record.snapshot) return index;
  return 0;
}

export class MemoryStore implements RunStore {
  readonly location: string;
  private header: JournalHeader | null = null;
  private records: StoredRecord[] = [];
  private readonly archived: StoredRecord[][] = [];
  readonly decisions = new MemoryDecisionInbox();

  constructor(name = 'memory') {
    this.location = `${name} (in memory, not durable)`;
  }

  async exists(): Promise<boolean> {
    return this.header !== null;
  }

  async load(options: LoadOptions = {}): Promise<LoadedRun> {
    if (!this.header) throw new StoreMissingError(this.location, options.repair ? 'resume' : 'read');
    options.checkHeader?.(this.header);
    const last = this.records.length - 1;
    const from = !options.fromLastSnapshot ? 0 : options.finalRecord && last > 0 && this.records[last]!.record.final ? last : lastSnapshotIndex(this.records);
    return { header: this.header, records: this.records.slice(from), tornTail: null, totalBytes: 0 };
  }

  async create(header: JournalHeader, first: JournalRecord): Promise<AppendReceipt> {
    if (this.header) throw new Error(`a run already exists in ${this.location}`);
    this.header = header;
    this.records = [{ record: first, bytes: 0, offset: 0 }];
    return { bytes: 0 };
  }

  async createWith(header: JournalHeader, records: readonly JournalRecord[]): Promise<AppendReceipt> {
    if (this.header) throw new Error(`a run already exists in ${this.location}`);
    this.header = header;
    this.records = records.map((record, offset) => ({ record, bytes: 0, offset }));
    return { bytes: 0 };
  }

  async append(record: JournalRecord): Promise<AppendReceipt> {
    // The checksum a file's line would carry, for the record a snapshot names (only there: it costs a JSON text).
    const previous = this.records[this.records.length - 1];
    if (record.snapshot && previous) previous.crc = checksumOf(documentJson(previous.record));
    this.records.push({ record, bytes: 0, offset: this.records.length });
    return { bytes: 0 };
  }

  async appendBatch(records: readonly JournalRecord[]): Promise<AppendReceipt> {
    for (const record of records) this.records.push({ record, bytes: 0, offset: this.records.length });
    return { bytes: 0, bytesEach: records.map(() => 0) };
  }

  async lock(): Promise<RunLock> {
    return { holder: 'this process', release: async () => {} };
  }

  async archive(): Promise<string> {
    this.archived.push(this.records);
    this.header = null;
    this.records = [];
    return `${this.location} archive #${this.archived.length}`;
  }
}
