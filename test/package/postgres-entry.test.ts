/**
 * durable-agent/postgres hands out what a program drives a fleet with, not the fleet's insides:
 * how the sealed-task listing reads run keys in bulk, and how messages name where a key is kept,
 * are internal (src/store/pg/pg-run-keys.ts), while rotating and shredding keys are public.
 */
import { expect, it } from 'vitest';

it('exports the key operations of a sealed fleet, not the helpers behind them', async () => {
  const names = Object.keys(await import('../../src/postgres.ts'));
  expect(names).toEqual(expect.arrayContaining(['rotatePgRunKeys', 'rotatePgScheduleKeys', 'shredPgRun']));
  expect(names.filter((name) => ['readPgRunKeysOf', 'runKeyColumnOf', 'readPgRunKey', 'checkedWrap', 'pgRunKeyPlace'].includes(name))).toEqual([]);
});
