/**
 * A sealed run's wrapped data key, kept beside its journal in RUN_FOLDER/run-key.json rather than
 * in it: a rotation rewrites this one small file per run, and deleting it leaves the run's content
 * unreadable for good (crypto-shredding) while its journal stays whole.
 *
 * It is written whole or not at all (temp file, fsync, rename, the folder fsynced), before the
 * journal it serves exists, so a crash never leaves a sealed journal without its key file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type WrappedRunKey, masterKeyIdOf } from '../seal/envelope.ts';
import { SealedValueError } from '../seal/seal-errors.ts';
import { fsyncDir, writeFileDurably } from '../util/durable-file.ts';
import { PRIVATE_FILE } from './state-folder.ts';

export const RUN_KEY_FILE = 'run-key.json';

export function runKeyPathOf(runFolder: string): string {
  return path.join(runFolder, RUN_KEY_FILE);
}

/** Writes the wrap in place of the one there, atomically (a kill leaves the old wrap or the new). */
export function writeRunKeyFile(runFolder: string, wrapped: WrappedRunKey): void {
  writeFileDurably(runKeyPathOf(runFolder), `${JSON.stringify(wrapped)}\n`, PRIVATE_FILE);
}

/** The wrap kept for the run, or null when there is none (a plain run, or a shredded one). */
export function readRunKeyFile(runFolder: string, runId: string | null): WrappedRunKey | null {
  const file = runKeyPathOf(runFolder);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  let wrapped: unknown;
  try {
    wrapped = JSON.parse(text);
  } catch (error) {
    throw new SealedValueError('run key', runId, null, `${file} is not JSON`, null, { cause: error });
  }
  if (masterKeyIdOf(wrapped) === null) throw new SealedValueError('run key', runId, null, `${file} is not a wrapped run key this release reads`);
  return wrapped as WrappedRunKey;
}

/** Deletes the wrap, durably: the run's content can never be opened again. Whether there was one. */
export function deleteRunKeyFile(runFolder: string): boolean {
  const file = runKeyPathOf(runFolder);
  try {
    fs.unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  fsyncDir(runFolder);
  return true;
}
