/**
 * The tasks of the console's list rows of sealed fleet runs (a task submitted sealed, a sealed
 * fork's): opened when the console holds the master key, else named, with the key they need. A
 * sealed string is never shown as if it were the task. Their runs' keys are read in one query.
 */
import { environmentKeys } from '../seal/environment-keys.ts';
import type { KeysGiven } from '../seal/keys.ts';
import { KeyNotGivenError } from '../seal/seal-errors.ts';
import { openSubmittedSpec } from '../seal/spec-content.ts';
import { isSealedValue } from '../seal/value-codec.ts';
import { RunKeyMissingError } from '../store/errors.ts';
import type { Database } from '../store/pg/pool.ts';
import type { ConsoleRow } from './console-row.ts';

/** The keys of the console's environment, read when a sealed task is first shown. */
const consoleKeys = environmentKeys();

export async function withSealedTasksShown(pool: Database, rows: ConsoleRow[], keys: KeysGiven = consoleKeys): Promise<ConsoleRow[]> {
  const sealed = rows.filter((row) => isSealedValue(row.task));
  if (sealed.length === 0) return rows;
  const { readPgRunKeysOf, runKeyColumnOf } = await import('../store/pg/index.ts');
  const wraps = await readPgRunKeysOf(pool, sealed.map((row) => row.runId));
  const masterKeys = typeof keys === 'function' ? () => keys() : async () => keys;
  const shown = new Map<string, string>();
  for (const row of sealed) {
    const wrapped = wraps.get(row.runId) ?? null;
    try {
      const opened = await openSubmittedSpec({ task: row.task }, row.runId, {
        wrapped: async () => wrapped,
        keys: masterKeys,
        missing: (keyId) => new RunKeyMissingError(row.runId, keyId, runKeyColumnOf(row.runId)),
      });
      shown.set(row.runId, opened.task);
    } catch (error) {
      shown.set(row.runId, sealedWords(wrapped?.master ?? null, error));
    }
  }
  return rows.map((row) => (shown.has(row.runId) ? { ...row, task: shown.get(row.runId)! } : row));
}

function sealedWords(master: string | null, error: unknown): string {
  if (master === null || error instanceof RunKeyMissingError) return '(sealed) its run key was deleted (shredded): it can never be read';
  if (error instanceof KeyNotGivenError) return `(sealed) needs the master key "${error.keyId}"`;
  return `(sealed) cannot be opened with the console's keys (master key "${master}")`;
}
