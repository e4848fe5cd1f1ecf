/**
 * A diagnostic contender: the barest durable store, driven by the same loop. Each record is one
 * JSON line appended and fdatasynced where our store syncs, with no commit mark, no checksum and
 * no lock file. Comparing it with our store separates what our store's design costs from what any
 * store pays when the loop computes between its fsyncs (the raw floor has nothing in between).
 * Records are kept in memory for load(): it is not a store to resume from.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { JournalHeader, JournalRecord } from '../src/store/journal/journal-record.ts';
import { MemoryStore } from '../src/store/memory-store.ts';
import type { AppendOptions, AppendReceipt } from '../src/store/store.ts';
import { fsyncDir } from '../src/util/durable-file.ts';

export class BareAppendStore extends MemoryStore {
  private fd: number | null = null;
  private end = 0;

  constructor(readonly dir: string) {
    super('bare append');
  }

  override async create(header: JournalHeader, first: JournalRecord): Promise<AppendReceipt> {
    await super.create(header, first);
    fs.mkdirSync(this.dir, { recursive: true });
    this.fd = fs.openSync(path.join(this.dir, 'bare.jsonl'), 'w');
    const bytes = this.write(`${JSON.stringify(header)}\n${JSON.stringify(first)}\n`);
    fs.fsyncSync(this.fd);
    fsyncDir(this.dir);
    return { bytes };
  }

  override async append(record: JournalRecord, options: AppendOptions = {}): Promise<AppendReceipt> {
    await super.append(record);
    const bytes = this.write(`${JSON.stringify(record)}\n`);
    if (options.sync !== false) fs.fdatasyncSync(this.fd!);
    return { bytes };
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }

  private write(text: string): number {
    const line = Buffer.from(text, 'utf8');
    for (let done = 0; done < line.length; ) done += fs.writeSync(this.fd!, line, done, line.length - done, this.end + done);
    this.end += line.length;
    return line.length;
  }
}
