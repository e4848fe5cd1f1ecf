/**
 * A SIGKILL at each point of keys rotate --seal-plain on a fleet, generated: the sealing-in is run
 * once whole to count its statements, then, each on a copy of the same plain fleet, once per
 * statement killed before it is sent and once killed just after its answer (so after each COMMIT
 * too). After each kill every run is wholly plain or wholly sealed, never a mix; a rotation run
 * again seals the rest, and every run then reads with the key where it stood, no content left
 * readable in any table.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { KeyRing } from '../../src/seal/keys.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { sealPlainPgRuns } from '../../src/store/pg/pg-seal-plain.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import type { Database } from '../../src/store/pg/pool.ts';
import { REPO } from '../helpers/cli.ts';
import { databaseText } from '../helpers/fleet-run-reads.ts';
import { makePlainFleet, runSealing, SECRETS } from '../helpers/fleet-seal-plain.ts';
import { freshDatabase, pool, postgresAvailable, server, usePostgres, withDb } from '../helpers/use-postgres.ts';

const FIXTURE = path.join(REPO, 'test', 'fixtures', 'seal-plain-killed.ts');
const run = promisify(execFile);
const keyBytes = randomBytes(32);
const ring = KeyRing.of([{ id: 'k1', key: keyBytes }]);

/** Runs the sealing-in in a process of its own; the exit is SIGKILL when it was killed, else its output. */
async function sealKilled(url: string, statement: number, mode: 'before' | 'after'): Promise<{ killed: boolean; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', FIXTURE, url, String(statement), mode], { cwd: REPO, env: { ...process.env, KEY_BASE64: keyBytes.toString('base64') } });
    return { killed: false, stdout };
  } catch (error) {
    if ((error as { signal?: string }).signal !== 'SIGKILL') throw error;
    return { killed: true, stdout: '' };
  }
}

let copies = 0;
/** A copy of the plain fleet's database (a template copy: the same rows, ids and leases). */
async function copyOf(template: string): Promise<string> {
  const name = `seal_kill_${++copies}`;
  // The template's last sessions may still be closing: a copy waits until none is left.
  await vi.waitFor(() => pool.query(`CREATE DATABASE ${name} TEMPLATE ${template}`), { timeout: 20_000, interval: 100 });
  return server.url.replace(/\/postgres$/, `/${name}`);
}

async function states(db: Database, ids: readonly string[], keys?: KeyRing): Promise<string[]> {
  return Promise.all(ids.map(async (id) => foldJournal(id, await new PgRunStore(db, id, keys ? { keys } : {}).load()).state));
}

describe.skipIf(!postgresAvailable())('a SIGKILL at each point of sealing in a fleet', () => {
  usePostgres({ prefix: 'seal_kills' });

  it('leaves every run wholly plain or wholly sealed, and a rotation run again seals the rest, each readable where it stood', async () => {
    const template = 'seal_kills_plain';
    const templateUrl = await freshDatabase(template);
    const fleet = await makePlainFleet(templateUrl);
    const ids = [fleet.finished, fleet.waiting, fleet.midTurn];
    const before = await withDb(templateUrl, (db) => states(db, ids));

    const whole = await sealKilled(await copyOf(template), Number.MAX_SAFE_INTEGER, 'before');
    expect(whole.stdout).toContain(`sealed ${ids.length} failed 0`);
    const statements = Number(/statements (\d+)/.exec(whole.stdout)?.[1]);
    // A batch's ids, then for each run at least BEGIN, its row, its records, their update, its inbox, its row's update, COMMIT.
    expect(statements).toBeGreaterThanOrEqual(1 + 7 * ids.length);
    console.log(`[seal-plain kills] ${ids.length} runs sealed in ${statements} statements → ${statements * 2} kills, each on a copy of the fleet`);
    const points = Array.from({ length: statements }, (_, statement) => (['before', 'after'] as const).map((mode) => ({ statement, mode }))).flat();

    const killOne = async ({ statement, mode }: { statement: number; mode: 'before' | 'after' }) => {
      const url = await copyOf(template);
      const { killed } = await sealKilled(url, statement, mode);
      expect(killed, `statement ${statement} ${mode}`).toBe(true);
      await withDb(url, async (db) => {
        for (const id of ids) expect(['plain', 'sealed'], `statement ${statement} ${mode}: run ${id}`).toContain(await runSealing(db, id));
        const again = await sealPlainPgRuns(db, ring);
        expect(again.failed, `statement ${statement} ${mode}`).toEqual([]);
        expect(again.held).toEqual([]);
        for (const id of ids) expect(await runSealing(db, id), `statement ${statement} ${mode}: run ${id}`).toBe('sealed');
        expect(await states(db, ids, ring)).toEqual(before);
        const text = await databaseText(db);
        for (const secret of SECRETS) expect(text, `statement ${statement} ${mode}`).not.toContain(secret);
      });
      await pool.query(`DROP DATABASE ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
    };
    // Two kills at a time, each on a copy of its own.
    const next = points.values();
    await Promise.all(
      [0, 1].map(async () => {
        for (const point of next) await killOne(point);
      }),
    );
  }, 900_000);
});
