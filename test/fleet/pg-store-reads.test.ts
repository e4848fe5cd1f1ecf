/**
 * The PostgreSQL store's load holds the file store's contract: a reader that takes no lease reads
 * a consistent prefix of a run that is being written (the count first, then the records it
 * counts), and a record missing from what the run counts is refused, whatever the caller accepts.
 */
import { describe, expect, it } from 'vitest';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { readRunStatus } from '../../src/runtime/run-status.ts';
import { StoreCorruptError, StoreMissingError } from '../../src/store/errors.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { snapshotContextOf } from '../../src/store/journal/journal-codec.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { pool, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

function longRun(runId: string, turns: number, snapshotEvery?: number) {
  const script = Array.from({ length: turns }, (_, n) => toolUseReply([{ id: `toolu_${n}`, name: 'lookup', input: { q: `q${n}` } }]));
  return startRun({
    store: new PgRunStore(pool, runId, { leaseMs: 60_000 }),
    model: scriptedModel([...script, endTurnReply('done')]),
    tools: countingTools().tools,
    task: 'look things up',
    maxTurns: turns + 1,
    snapshotEvery,
  });
}

describe.skipIf(!postgresAvailable())('the PostgreSQL store, read', () => {
  usePostgres({ connections: 8 });

  it('while a run is written: every read is a consistent prefix, never "damaged"', async () => {
    let writing = true;
    const written = longRun('live', 300).finally(() => (writing = false));
    const reader = new PgRunStore(pool, 'live');
    const failures: string[] = [];
    let reads = 0;
    let seen = 0;
    while (writing) {
      try {
        const status = await readRunStatus(reader);
        if (status.records < seen) failures.push(`${status.records} records after ${seen}`);
        seen = Math.max(seen, status.records);
        reads += 1;
      } catch (error) {
        if (!(error instanceof StoreMissingError)) failures.push((error as Error).message);
      }
    }
    expect((await written).status).toBe('done');
    console.log(`[pg live reads] ${reads} reads while ${seen}+ records were written`);
    expect(failures.slice(0, 5)).toEqual([]);
    expect(reads).toBeGreaterThan(20);
  });

  it('refuses a run missing a record it counts, even when the caller accepts a lost record, and says so', async () => {
    await longRun('cut', 2);
    await pool.query('DELETE FROM da_records WHERE run_id = $1 AND seq = (SELECT max(seq) FROM da_records WHERE run_id = $1)', ['cut']);
    for (const options of [{}, { acceptLostRecord: true }]) {
      const error = await new PgRunStore(pool, 'cut').load(options).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreCorruptError);
      expect(error).toMatchObject({ damage: 'rows-missing' });
      expect((error as Error).message).toMatch(/the run counts \d+ records but \d+ are stored: records \d+ to \d+ are missing/);
      expect((error as Error).message).toContain('rows were deleted afterwards');
    }
  });

  it('a load from the last snapshot reads only from there, gives the state of the whole fold, and refuses a snapshot that does not belong', async () => {
    await longRun('snap', 40, 25);
    const store = new PgRunStore(pool, 'snap');
    const whole = await store.load();
    const partial = await store.load({ fromLastSnapshot: true });
    const snapshots = whole.records.filter((stored) => stored.record.snapshot).map((stored) => stored.record.seq);
    expect(snapshots.length).toBeGreaterThan(2);
    expect(partial.records[0]!.record.seq).toBe(snapshots[snapshots.length - 1]);
    expect(partial.records.length).toBeLessThan(whole.records.length / 3);
    expect(snapshotContextOf(foldJournal(store.location, partial))).toEqual(snapshotContextOf(foldJournal(store.location, whole)));
    // The snapshot now names a record the run does not hold before it.
    const last = snapshots[snapshots.length - 1]!;
    await pool.query(`UPDATE da_records SET body = replace(body, '"crc":"', '"crc":"0') WHERE run_id = $1 AND seq = $2`, ['snap', last]);
    await expect(store.load({ fromLastSnapshot: true })).rejects.toThrow(/snapshot record \d+ says it follows record \d+ with checksum 0/);
    await expect(store.load().then((loaded) => foldJournal(store.location, loaded))).rejects.toThrow(StoreCorruptError);
  });

  it('says how to start a run when a read finds none, and what a resume needs when a resume does', async () => {
    const read = await new PgRunStore(pool, 'nothing-here').load().catch((e: unknown) => e);
    expect(read).toMatchObject({ name: 'StoreMissingError', attempted: 'read' });
    const resume = await new PgRunStore(pool, 'nothing-here').load({ repair: true }).catch((e: unknown) => e);
    expect(resume).toMatchObject({ name: 'StoreMissingError', attempted: 'resume' });
    expect((resume as Error).message).toContain('a resume needs one');
  });
});
