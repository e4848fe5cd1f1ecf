/**
 * A file store's blobs: the payloads of images and documents (a screenshot a tool returned, a
 * PDF) kept once each, in DIR/blobs/sha256-<hex> (a sealed run's: DIR/blobs/hmac-<hex>, sealed,
 * see src/seal/blob-seal.ts), instead of inside every record that restates them. Without them a snapshot writes the whole state again, image and all: a 1 MB screenshot
 * in turn 1 of a run that snapshots every 5 records is written into every snapshot after it.
 *
 * The record keeps the block with a reference in place of the bytes (its media type, the bytes'
 * SHA-256 and length); a load puts the bytes back, so every reader, the resume and the request
 * to the model get the block exactly as the tool returned it.
 *
 * Durability: a blob is written under a temporary name, synced, renamed to its name and its
 * directory synced BEFORE the record that refers to it is written. A crash in between leaves a
 * blob no record refers to: harmless (a later record with the same bytes reuses it). No record
 * can refer to a blob a crash could lose; one that does anyway (it was deleted or changed by
 * hand) is refused with StoreBlobError, never read as a conversation without it.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type BlobSealer, isSealedBlobName } from '../seal/blob-seal.ts';
import type { JournalRecord } from './journal/journal-record.ts';
import type { StoredRecord } from './store.ts';
import { StoreBlobError } from './blob-errors.ts';
import { PRIVATE_DIR, PRIVATE_FILE } from './state-folder.ts';
import { fsyncDir, isTempName, writeFileDurably } from '../util/durable-file.ts';
import { openRegularFile } from '../util/regular-file.ts';
import { type BlobSource, isBlobSource, mapPayloadBlocks } from '../util/rich-blocks.ts';

export const BLOBS_DIR = 'blobs';
/** A payload of this many characters or more is kept in a blob; a smaller one stays in its record. */
export const BLOB_MIN_CHARS = 1024;
/** A plain blob's name (the SHA-256 of its bytes) or a sealed one's (a keyed hash, see blob-seal.ts). */
const BLOB_NAME = /^(?:sha256|hmac)-[0-9a-f]{64}$/;

type Block = Record<string, unknown>;
/** A source that carries its bytes: { type: 'base64' | 'text', media_type, data }. */
type InlineSource = { type: 'base64' | 'text'; media_type: string; data: string };

export interface FileBlobsOptions {
  /** Tests and drills: called once a new blob is durable, before the record that refers to it is written. */
  onBlobWritten?: ((file: string) => void) | undefined;
  /** Whether the run is sealed, and its blob sealer when its key is at hand (the store's sealing says). */
  sealing?: (() => BlobSealing) | undefined;
}

/**
 * How the run at hand keeps its blobs: plain, or sealed (with the sealer when its run key is
 * open; without it, a reader leaves the references in place and a writer is refused).
 */
export type BlobSealing = { sealed: false } | { sealed: true; sealer: BlobSealer | null };

const PLAIN: BlobSealing = { sealed: false };

/**
 * Where a store keeps blobs. `put` must make the blob durable before the record that refers to
 * it can be (a file store: synced before the record is written; a database: in the same
 * transaction as the record); `get` returns the bytes stored under the name, or null.
 */
export interface BlobKeeper {
  put(name: string, bytes: Buffer): void;
  get(name: string): Buffer | null;
  /** Where the blob of that name is, in words a user can act on (a path; a table and key). */
  where(name: string): string;
}

/** Payloads to references and back, for any store that keeps blobs (see BlobKeeper). */
export class BlobReferences {
  /** Sources already in a blob, and their reference: a snapshot that restates a payload hashes and writes nothing. */
  private readonly refs = new WeakMap<object, BlobSource>();
  /** Sources that stay in their record (small, or bytes that would not read back as the same text). */
  private readonly inline = new WeakSet<object>();

  constructor(
    private readonly keeper: BlobKeeper,
    private readonly sealing: () => BlobSealing = () => PLAIN,
  ) {}

  /**
   * The records as the journal keeps them: each large payload replaced by a reference to its
   * blob, every such blob put when this returns. Records without one are returned as they are.
   */
  externalize(records: readonly JournalRecord[]): readonly JournalRecord[] {
    let out: JournalRecord[] | null = null;
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!;
      const stored = mapRecordBlocks(record, (block) => this.referenceOf(block));
      if (stored !== record) {
        out ??= records.slice();
        out[i] = stored;
      }
    }
    return out ?? records;
  }

  /**
   * The records as loaded, each reference replaced by its payload, checked against its name and
   * length (StoreBlobError when it is missing or is not those bytes). A blob is read once per
   * load, however many records restate it.
   */
  resolve(records: StoredRecord[], location: string): StoredRecord[] {
    const read = new Map<string, Buffer>();
    let out: StoredRecord[] | null = null;
    for (let i = 0; i < records.length; i++) {
      const stored = records[i]!;
      const seq = stored.record.seq;
      const record = mapRecordBlocks(stored.record, (block) => {
        if (!isBlobSource(block.source)) return block;
        const ref = block.source;
        const problem = referenceProblem(ref);
        if (problem) throw new StoreBlobError(location, seq, String(ref.$blob), 'malformed', problem);
        let bytes = read.get(ref.$blob);
        if (!bytes) {
          if (isSealedBlobName(ref.$blob)) {
            const sealing = this.sealing();
            if (!sealing.sealed) throw new StoreBlobError(location, seq, this.keeper.where(ref.$blob), 'malformed', 'it is a sealed blob, and the run is not sealed');
            // Read without the key: the reference stays, as the record's sealed content does.
            if (!sealing.sealer) return block;
            bytes = this.openedBytes(ref, sealing.sealer, location, seq);
          } else bytes = this.checkedBytes(ref, location, seq);
          read.set(ref.$blob, bytes);
        }
        const source: InlineSource = { type: ref.type, media_type: ref.media_type, data: bytes.toString(ref.type === 'base64' ? 'base64' : 'utf8') };
        // A later snapshot restating it writes the same reference, without hashing the payload again.
        this.refs.set(source, ref);
        return { ...block, source };
      });
      if (record !== stored.record) {
        out ??= records.slice();
        out[i] = { ...stored, record };
      }
    }
    return out ?? records;
  }

  /** The block with a reference in place of its payload, once the blob is put; the block itself when it stays inline. */
  private referenceOf(block: Block): Block {
    const source = block.source;
    if (!isInlineSource(source) || this.inline.has(source)) return block;
    let ref = this.refs.get(source);
    if (!ref) {
      const bytes = bytesOf(source);
      if (!bytes) {
        this.inline.add(source);
        return block;
      }
      const sealing = this.sealing();
      // prepareLoad refuses a writer of a sealed run without its key: this is a bug, never a plain blob of a sealed run.
      if (sealing.sealed && !sealing.sealer) throw new Error("A sealed run's blob was written without its run key.");
      const sealer = sealing.sealed ? sealing.sealer : null;
      const name = sealer ? sealer.nameOf(bytes) : `sha256-${createHash('sha256').update(bytes).digest('hex')}`;
      ref = { type: source.type, media_type: source.media_type, $blob: name, bytes: bytes.length };
      this.keeper.put(name, sealer ? sealer.seal(name, bytes) : bytes);
      this.refs.set(source, ref);
    }
    return { ...block, source: ref };
  }

  private checkedBytes(ref: BlobSource, location: string, seq: number): Buffer {
    const where = this.keeper.where(ref.$blob);
    const bytes = this.keeper.get(ref.$blob);
    if (!bytes) throw new StoreBlobError(location, seq, where, 'missing', 'there is none by that name');
    if (bytes.length !== ref.bytes) throw new StoreBlobError(location, seq, where, 'corrupt', `it holds ${bytes.length} bytes, not the ${ref.bytes} the record names`);
    const hex = createHash('sha256').update(bytes).digest('hex');
    if (`sha256-${hex}` !== ref.$blob) throw new StoreBlobError(location, seq, where, 'corrupt', `its bytes have the SHA-256 ${hex}, not the one in its name`);
    return bytes;
  }

  /** A sealed blob's bytes, opened and checked against its name (blob-seal.ts) and the length its reference names. */
  private openedBytes(ref: BlobSource, sealer: BlobSealer, location: string, seq: number): Buffer {
    const where = this.keeper.where(ref.$blob);
    const stored = this.keeper.get(ref.$blob);
    if (!stored) throw new StoreBlobError(location, seq, where, 'missing', 'there is none by that name');
    const bytes = sealer.open(ref.$blob, stored);
    if (bytes.length !== ref.bytes) throw new StoreBlobError(location, seq, where, 'corrupt', `it holds ${bytes.length} bytes, not the ${ref.bytes} the record names`);
    return bytes;
  }
}

/** A file store's blobs: DIR/blobs/sha256-<hex>, each written whole and synced before any record refers to it. */
export class FileBlobs implements BlobKeeper {
  readonly dir: string;
  private readonly references: BlobReferences;

  /**
   * Whether the run has kept any blob (its folder is there). A run that has is loaded with every
   * record that refers to one, each blob checked, rather than answered from its final record.
   */
  any(): boolean {
    return fs.existsSync(this.dir);
  }
  /** Blobs known to be on disk whole. */
  private readonly onDisk = new Set<string>();

  constructor(
    private readonly runDir: string,
    private readonly options: FileBlobsOptions = {},
  ) {
    this.dir = path.join(runDir, BLOBS_DIR);
    this.references = new BlobReferences(this, options.sealing);
  }

  /** See BlobReferences.externalize: each blob is durable when this returns. */
  externalize(records: readonly JournalRecord[]): readonly JournalRecord[] {
    return this.references.externalize(records);
  }

  /** See BlobReferences.resolve. */
  resolve(records: StoredRecord[], journalPath: string): StoredRecord[] {
    return this.references.resolve(records, journalPath);
  }

  where(name: string): string {
    return path.join(this.dir, name);
  }

  /** Temp file, fsync, rename, fsync of the directory: the name exists only with all of its bytes on disk. */
  put(name: string, bytes: Buffer): void {
    if (this.onDisk.has(name)) return;
    const file = path.join(this.dir, name);
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (stat?.isFile() && stat.size === bytes.length) {
      this.onDisk.add(name);
      return;
    }
    if (!fs.existsSync(this.dir)) {
      fs.mkdirSync(this.dir, { mode: PRIVATE_DIR });
      fsyncDir(this.runDir);
    }
    writeFileDurably(file, bytes, PRIVATE_FILE);
    this.onDisk.add(name);
    this.options.onBlobWritten?.(file);
  }

  get(name: string): Buffer | null {
    const file = path.join(this.dir, name);
    let fd: number;
    try {
      fd = openRegularFile(file, 'a blob of the run');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    try {
      return fs.readFileSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }
}

function isInlineSource(source: unknown): source is InlineSource {
  if (source === null || typeof source !== 'object') return false;
  const { type, data, media_type: mediaType } = source as Partial<InlineSource>;
  return (type === 'base64' || type === 'text') && typeof data === 'string' && data.length >= BLOB_MIN_CHARS && typeof mediaType === 'string';
}

/**
 * The payload's bytes, or null when they would not read back as the very same text (base64 that
 * is not in its one standard form, text with a lone surrogate): such a payload stays inline.
 */
function bytesOf(source: InlineSource): Buffer | null {
  const bytes = Buffer.from(source.data, source.type === 'base64' ? 'base64' : 'utf8');
  return bytes.toString(source.type === 'base64' ? 'base64' : 'utf8') === source.data ? bytes : null;
}

function referenceProblem(ref: BlobSource): string | null {
  if (!BLOB_NAME.test(ref.$blob)) return `its reference names ${JSON.stringify(ref.$blob)}, which is not a blob name (sha256- or hmac- and 64 hex digits)`;
  if (ref.type !== 'base64' && ref.type !== 'text') return `its reference has the source type ${JSON.stringify(ref.type)}, which this version does not know`;
  if (typeof ref.media_type !== 'string' || !Number.isSafeInteger(ref.bytes) || ref.bytes < 0) return 'its reference lacks its media type or length';
  return null;
}

/**
 * The record with `map` applied to every image and document block it holds: in its messages,
 * its ledger entries (and a snapshot's kept ones) and a held reply. The record itself when
 * nothing changes (most records hold no such block).
 */
export function mapRecordBlocks(record: JournalRecord, map: (block: Block) => Block): JournalRecord {
  let out: JournalRecord = record;
  const messages = record.messages;
  if (messages) {
    const add = mapEach(messages.add, (message) => {
      if (typeof message.content === 'string') return message;
      const content = mapPayloadBlocks(message.content, map);
      return content === message.content ? message : { ...message, content: content as typeof message.content };
    });
    if (add !== messages.add) out = { ...out, messages: { from: messages.from, add } };
  }
  const results = record.results;
  if (results) {
    const add = mapEach(results.add, (outcome) => withContent(outcome, map));
    if (add !== results.add) out = { ...out, results: { from: results.from, add } };
  }
  const snapshot = record.snapshot;
  if (snapshot && Array.isArray(snapshot.ledger)) {
    const ledger = mapEach(snapshot.ledger, (outcome) => withContent(outcome, map));
    if (ledger !== snapshot.ledger) out = { ...out, snapshot: { ...snapshot, ledger } };
  }
  const held = record.heldReply;
  if (held && Array.isArray(held.content)) {
    const content = mapPayloadBlocks(held.content, map);
    if (content !== held.content) out = { ...out, heldReply: { ...held, content: content as typeof held.content } };
  }
  const final = record.final?.context;
  if (final && typeof final === 'object' && Array.isArray(final.results) && (final.results.length > 0 || final.heldReply)) {
    // The final mark restates the turn's results and the held reply: their payloads are kept once too.
    const { results: finalResults, heldReply } = mapRecordBlocks({ results: { from: 0, add: final.results }, heldReply: final.heldReply } as JournalRecord, map);
    if (finalResults!.add !== final.results || heldReply !== final.heldReply) {
      out = { ...out, final: { ...record.final!, context: { ...final, results: finalResults!.add, heldReply: heldReply ?? null } } };
    }
  }
  return out;
}

function withContent<T extends { content: unknown }>(item: T, map: (block: Block) => Block): T {
  if (!Array.isArray(item.content)) return item;
  const content = mapPayloadBlocks(item.content, map);
  return content === item.content ? item : { ...item, content };
}

function mapEach<T>(items: T[], map: (item: T) => T): T[] {
  if (!Array.isArray(items)) return items;
  let out: T[] | null = null;
  for (let i = 0; i < items.length; i++) {
    const next = map(items[i]!);
    if (next !== items[i]) {
      out ??= items.slice();
      out[i] = next;
    }
  }
  return out ?? items;
}

/** The names of the blobs the records refer to, added to `into`. */
export function blobNamesIn(records: readonly JournalRecord[], into = new Set<string>()): Set<string> {
  for (const record of records) {
    mapRecordBlocks(record, (block) => {
      if (isBlobSource(block.source)) into.add(block.source.$blob);
      return block;
    });
  }
  return into;
}

/** The files of DIR/blobs: blobs by name, and what a kill during a blob's write left (its temp file), with their sizes. */
export function blobFilesOf(runDir: string): Array<{ name: string; bytes: number; partial: boolean }> {
  const dir = path.join(runDir, BLOBS_DIR);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => BLOB_NAME.test(name) || isTempName(name))
    .sort()
    .map((name) => ({ name, bytes: fs.lstatSync(path.join(dir, name)).size, partial: !BLOB_NAME.test(name) }));
}
