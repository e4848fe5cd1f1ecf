/**
 * The tasks of sealed fleet runs and schedules as every outside view shows them (list, its JSON,
 * the serve API, the console, schedule list): opened when the viewer holds the master key, else
 * named with the key they need. A sealed string is never handed out as if it were the task.
 */
import { type WrappedRunKey, masterKeyIdOf } from '../seal/envelope.ts';
import type { KeysGiven, MasterKeys } from '../seal/keys.ts';
import { KeyNotGivenError } from '../seal/seal-errors.ts';
import { openScheduleTask, openSubmittedSpec } from '../seal/spec-content.ts';
import { isSealedValue } from '../seal/value-codec.ts';
import { RunKeyMissingError } from '../store/errors.ts';
import { readPgRunKeysOf, runKeyColumnOf } from '../store/pg/pg-run-keys.ts';
import type { Database } from '../store/pg/pool.ts';

/** The master keys given, read when a sealed task is first opened (null: none given). */
export function keysReader(keys: KeysGiven | undefined): () => Promise<MasterKeys | null> {
  let read: Promise<MasterKeys | null> | null = null;
  return () => {
    read ??= keys === undefined ? Promise.resolve(null) : typeof keys === 'function' ? keys() : Promise.resolve(keys);
    return read;
  };
}

/** What a sealed task shows when it cannot be opened: the key it needs, or that it never can be. */
export function sealedTaskWords(master: string | null, error: unknown): string {
  if (master === null || error instanceof RunKeyMissingError) return '(sealed) its run key was deleted (shredded): it can never be read';
  if (error instanceof KeyNotGivenError) return `(sealed) needs the master key "${error.keyId}"`;
  return `(sealed) cannot be opened with the keys given (master key "${master}")`;
}

/**
 * The tasks of these fleet runs, by run id, as a view shows them: only those sealed, each opened
 * with `keys` or named. Their runs' keys are read in one query.
 */
export async function shownFleetTasks(pool: Database, runs: ReadonlyArray<{ runId: string; task: unknown }>, keys: () => Promise<MasterKeys | null>): Promise<Map<string, string>> {
  const sealed = runs.filter((run) => isSealedValue(run.task));
  const shown = new Map<string, string>();
  if (sealed.length === 0) return shown;
  const wraps = await readPgRunKeysOf(pool, sealed.map((run) => run.runId));
  for (const run of sealed) {
    const wrapped: WrappedRunKey | null = wraps.get(run.runId) ?? null;
    try {
      const opened = await openSubmittedSpec({ task: run.task }, run.runId, {
        wrapped: async () => wrapped,
        keys,
        missing: (keyId) => new RunKeyMissingError(run.runId, keyId, runKeyColumnOf(run.runId)),
      });
      shown.set(run.runId, String(opened.task));
    } catch (error) {
      shown.set(run.runId, sealedTaskWords(wrapped?.master ?? null, error));
    }
  }
  return shown;
}

/** A sealed schedule's task as a view shows it: opened with `keys`, else named with the key it needs. */
export async function shownScheduleTask(task: string, taskKey: unknown, schedule: string, keys: () => Promise<MasterKeys | null>): Promise<string> {
  try {
    return await openScheduleTask(task, taskKey, schedule, await keys());
  } catch (error) {
    return sealedTaskWords(masterKeyIdOf(taskKey), error);
  }
}
