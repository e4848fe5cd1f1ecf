/**
 * The blobs of a run folder (DIR/.durable-agent/blobs/) that no journal of the folder refers to
 * any more: those of archived runs a prune removed, and one a kill left between its write and
 * its record. They are read by nothing, so removing them loses nothing; but a blob is written
 * before its record, and a writer may be between the two, or may be about to refer again to a
 * blob it finds already there. So they are removed only while the prune holds the run's lock
 * (no writer can be at work), after the references are read again under it; while another
 * process holds the lock, they stay, and the report says why. A journal that cannot be read
 * might refer to any of them: then none is removed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { BLOBS_DIR, blobFilesOf, blobNamesIn } from '../store/blobs.ts';
import { RunLockedError } from '../store/errors.ts';
import { fileBytes } from '../store/file-store.ts';
import type { FolderRunStore } from '../store/store.ts';
import { readJournal } from '../store/journal/journal-reader.ts';
import { fsyncDir } from '../util/durable-file.ts';

export interface BlobSweep {
  /** The blobs removed (or, with dryRun, that would be), by file name. */
  removed: string[];
  bytes: number;
  /** Why blobs no journal refers to were kept (the run was in use, a journal could not be read); null otherwise. */
  kept: string | null;
}

/** `leaving`: archived journals a dry run would remove (their references do not keep a blob). */
export async function pruneBlobs(store: FolderRunStore, dryRun: boolean, leaving: readonly string[] = []): Promise<BlobSweep> {
  const first = unreferenced(store, new Set(leaving));
  if ('kept' in first || first.length === 0) return { removed: [], bytes: 0, kept: 'kept' in first ? first.kept : null };
  if (dryRun) return { removed: first.map((blob) => blob.name), bytes: first.reduce((sum, blob) => sum + blob.bytes, 0), kept: null };
  let lock;
  try {
    lock = await store.lock();
  } catch (error) {
    if (error instanceof RunLockedError) return { removed: [], bytes: 0, kept: `the run is in use, so a writer may be about to refer to them (${error.message})` };
    throw error;
  }
  try {
    const unused = unreferenced(store);
    if ('kept' in unused) return { removed: [], bytes: 0, kept: unused.kept };
    const dir = path.join(store.dir, BLOBS_DIR);
    for (const blob of unused) fs.rmSync(path.join(dir, blob.name), { force: true });
    if (unused.length > 0) fsyncDir(dir);
    return { removed: unused.map((blob) => blob.name), bytes: unused.reduce((sum, blob) => sum + blob.bytes, 0), kept: null };
  } finally {
    await lock.release();
  }
}

/** The blob files no journal of the folder (the current one, every archived one) refers to. */
function unreferenced(store: FolderRunStore, leaving: ReadonlySet<string> = new Set()): Array<{ name: string; bytes: number }> | { kept: string } {
  const files = blobFilesOf(store.dir);
  if (files.length === 0) return [];
  const archive = path.join(store.dir, 'archive');
  const journals = [store.journalPath, ...(fs.existsSync(archive) ? fs.readdirSync(archive).filter((name) => /^journal-.*\.jsonl$/.test(name)).map((name) => path.join(archive, name)) : [])];
  const referenced = new Set<string>();
  for (const journal of journals) {
    if (leaving.has(journal) || !fs.existsSync(journal)) continue;
    try {
      const fd = fs.openSync(journal, 'r');
      try {
        blobNamesIn(readJournal(journal, fileBytes(fd)).records.map((stored) => stored.record), referenced);
      } finally {
        fs.closeSync(fd);
      }
    } catch (error) {
      return { kept: `the journal ${journal} cannot be read (${(error as Error).message}), and it may refer to them` };
    }
  }
  return files.filter((file) => file.partial || !referenced.has(file.name));
}
