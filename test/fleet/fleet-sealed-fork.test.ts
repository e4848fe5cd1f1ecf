/**
 * Forks of sealed fleet runs, on a real cluster: the child is sealed under a run key of its own
 * (its row's run_key, wrapped by the first key given), its task too, and a worker with the key
 * runs it to the end; nothing of parent or child is readable in the database. Without the keys
 * the fork is refused naming the key, nothing written. A plain parent forked with keys gives a
 * sealed child, as a folder's does. The console's list and the command line's status never show
 * a sealed string as if it were the task.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KeyRing } from '../../src/index.ts';
import { KeyNotGivenError } from '../../src/errors.ts';
import { forkFleetRun, submitRun, Worker } from '../../src/postgres.ts';
import { fleetRows } from '../../src/console/fleet-rows.ts';
import { withSealedTasksShown } from '../../src/console/sealed-tasks.ts';
import { runDetail } from '../../src/console/run-detail.ts';
import type { ConsoleRow } from '../../src/console/console-row.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { shredPgRun } from '../../src/store/pg/pg-run-keys.ts';
import { migrate } from '../../src/store/pg/schema.ts';
import type { Database } from '../../src/store/pg/pool.ts';
import { BILLING_ANSWER, BILLING_TASK, billingAgent } from '../helpers/billing-agent.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { databaseText } from '../helpers/fleet-run-reads.ts';
import { toolUseProblems } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres, withDb } from '../helpers/use-postgres.ts';

const bytes1 = randomBytes(32);
const K1 = `k1:${bytes1.toString('base64')}`;
const ring1 = KeyRing.of([{ id: 'k1', key: bytes1 }]);

const cli = (args: string[], env?: Record<string, string | undefined>) => runCliAsync(args, { cwd: tempDir(), env: { DURABLE_AGENT_KEYS: undefined, DURABLE_AGENT_KEY_FILE: undefined, ...env } });

const TASK = BILLING_TASK;
const FIRST_ANSWER = BILLING_ANSWER;
const MESSAGE = 'Now remind ACME Widgets Ltd of the due date.';
const SECOND_ANSWER = 'Reminded ACME Widgets Ltd of the due date.';

async function drive(db: Database, agent: ReturnType<typeof billingAgent>, keys?: KeyRing): Promise<void> {
  await new Worker({ pool: db, agents: [agent], runConcurrency: 2, leaseMs: 60_000, exitWhenIdle: true, pollIntervalMs: 50, log: () => {}, ...(keys ? { keys } : {}) }).run();
}

async function rowOf(db: Database, id: string) {
  const { rows } = await db.query<{ run_key: { key: string; master: string } | null; header: { sealed?: string }; spec: { task: string }; finished: boolean }>(
    'SELECT run_key, header, spec, finished FROM da_runs WHERE id = $1',
    [id],
  );
  return rows[0];
}

async function counts(db: Database): Promise<{ runs: number; records: number }> {
  const { rows } = await db.query<{ runs: string; records: string }>('SELECT (SELECT count(*) FROM da_runs) AS runs, (SELECT count(*) FROM da_records) AS records');
  return { runs: Number(rows[0]!.runs), records: Number(rows[0]!.records) };
}

async function view(db: Database, id: string, keys?: KeyRing) {
  const run = await new PgRunStore(db, id, keys ? { keys } : {}).load();
  return foldJournal(id, run);
}

describe.skipIf(!postgresAvailable())('forks of sealed fleet runs', () => {
  usePostgres({ prefix: 'sealfork' });

  it('with keys the child is sealed under its own run key and a worker with the key runs it to the end; without them refused, nothing written; no content readable; the console and status show no sealed string', async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      const sent: string[] = [];
      const agent = billingAgent(sent, [SECOND_ANSWER]);
      await submitRun(db, { agent, task: TASK, runId: 'inv-1', keys: ring1 });
      await drive(db, agent, ring1);
      expect((await view(db, 'inv-1', ring1)).state).toBe('done');

      // Without the keys: refused naming the key, nothing written.
      const before = await counts(db);
      const refused = forkFleetRun(db, { run: 'inv-1', toRun: 'inv-2', message: MESSAGE });
      await expect(refused).rejects.toThrow(KeyNotGivenError);
      await expect(forkFleetRun(db, { run: 'inv-1', toRun: 'inv-2', message: MESSAGE })).rejects.toThrow(/"k1"/);
      expect(await counts(db)).toEqual(before);
      expect(await rowOf(db, 'inv-2')).toBeUndefined();

      const forked = await forkFleetRun(db, { run: 'inv-1', toRun: 'inv-2', message: MESSAGE, keys: ring1 });
      expect(forked.finished).toBe(false);
      const parent = (await rowOf(db, 'inv-1'))!;
      const child = (await rowOf(db, 'inv-2'))!;
      expect(child.run_key!.master).toBe('k1');
      expect(child.run_key!.key).not.toBe(parent.run_key!.key);
      expect(child.header.sealed).toBe(child.run_key!.key);
      // The child's task is sealed under its own key, not a copy of the parent's sealed string.
      expect(child.spec.task).toMatch(new RegExp(`^sealed:1:${child.run_key!.key}:`));
      expect(child.spec.task).not.toBe(parent.spec.task);

      await drive(db, agent, ring1);
      const done = await view(db, 'inv-2', ring1);
      expect(done.state).toBe('done');
      expect(done.context.task).toBe(TASK);
      expect(done.context.finalText).toBe(SECOND_ANSWER);
      expect(toolUseProblems(done.context.messages)).toEqual([]);
      expect(JSON.stringify(done.context.messages)).toContain(MESSAGE);
      // The invoice sent by the parent is in the child's records: it was not sent again.
      expect(sent).toHaveLength(1);
      expect((await view(db, 'inv-1', ring1)).context.finalText).toBe(FIRST_ANSWER);

      const text = await databaseText(db);
      for (const secret of [TASK, 'ACME Widgets Ltd', 'invoice sent to', MESSAGE, FIRST_ANSWER, SECOND_ANSWER]) expect(text).not.toContain(secret);

      // The console's list without the keys: the task named with the key it needs; with them, opened.
      const rows = await fleetRows(db);
      expect(rows.map((row) => row.runId).sort()).toEqual(['inv-1', 'inv-2']);
      for (const row of rows) {
        expect(row.task).toBe('(sealed) needs the master key "k1"');
        expect(JSON.stringify(row)).not.toContain('sealed:1:');
      }
      const raw = [{ runId: 'inv-2', task: child.spec.task } as ConsoleRow];
      expect((await withSealedTasksShown(db, raw, ring1))[0]!.task).toBe(TASK);
      // The run page without the keys: what it needs, never a sealed string.
      const page = await runDetail({ key: 'fleet~inv-2', source: 'fleet', store: new PgRunStore(db, 'inv-2'), archivedJournal: null, runDir: null, folder: null }, null);
      expect(page.sealed?.keyId).toBe('k1');
      expect(JSON.stringify(page)).not.toContain('sealed:1:');
      expect(JSON.stringify(page)).not.toContain('ACME Widgets Ltd');
      const opened = await runDetail({ key: 'fleet~inv-2', source: 'fleet', store: new PgRunStore(db, 'inv-2'), archivedJournal: null, runDir: null, folder: null }, ring1);
      expect(opened.summary?.task).toBe(TASK);
    });

    // The command line over the fleet, without the keys: no sealed string in what it prints.
    for (const args of [
      ['status', '--database-url', url],
      ['status', '--database-url', url, '--json'],
      ['result', '--database-url', url, '--run', 'inv-2'],
      ['list', '--database-url', url],
    ]) {
      const shown = await cli(args);
      expect(shown.code, `${args.join(' ')}: ${shown.stderr}`).toBe(0);
      expect(shown.stdout).toContain('inv-');
      expect(shown.stdout).not.toContain('sealed:1:');
      expect(shown.stdout).not.toContain('ACME Widgets Ltd');
    }
    // durable-agent fork over the fleet takes the keys of its environment: without them refused naming the key, with them a sealed child.
    const keyless = await cli(['fork', '--database-url', url, '--run', 'inv-1', '--to-run', 'inv-3']);
    expect(keyless.code).not.toBe(0);
    expect(keyless.stderr).toContain('"k1"');
    const keyed = await cli(['fork', '--database-url', url, '--run', 'inv-1', '--to-run', 'inv-3'], { DURABLE_AGENT_KEYS: K1 });
    expect(keyed.code, keyed.stderr).toBe(0);
    await withDb(url, async (db) => {
      const third = (await rowOf(db, 'inv-3'))!;
      expect(third.run_key!.master).toBe('k1');
      expect(third.header.sealed).toBe(third.run_key!.key);
      expect(await databaseText(db)).not.toContain('ACME Widgets Ltd');
      // A shredded parent's row says so; its children keep keys of their own.
      await shredPgRun(db, 'inv-1');
      const tasks = new Map((await fleetRows(db)).map((row) => [row.runId, row.task]));
      expect(tasks.get('inv-1')).toContain('(shredded)');
      expect(tasks.get('inv-2')).toBe('(sealed) needs the master key "k1"');
    });
    const withKey = await cli(['result', '--database-url', url, '--run', 'inv-2'], { DURABLE_AGENT_KEYS: K1 });
    expect(withKey.stdout, withKey.stderr).toContain(SECOND_ANSWER);
  });

  it('a plain fleet run forked with keys gives a sealed child (as a folder fork does), its task sealed; forked without them it stays plain', async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      await migrate(db);
      const sent: string[] = [];
      const agent = billingAgent(sent, [SECOND_ANSWER]);
      await submitRun(db, { agent, task: TASK, runId: 'plain-1' });
      await drive(db, agent);
      expect((await rowOf(db, 'plain-1'))!.run_key).toBeNull();

      await forkFleetRun(db, { run: 'plain-1', toRun: 'plain-2', message: MESSAGE });
      const plainChild = (await rowOf(db, 'plain-2'))!;
      expect(plainChild.run_key).toBeNull();
      expect(plainChild.header.sealed).toBeUndefined();
      expect(plainChild.spec.task).toBe(TASK);

      await forkFleetRun(db, { run: 'plain-1', toRun: 'sealed-2', message: MESSAGE, keys: ring1 });
      const sealedChild = (await rowOf(db, 'sealed-2'))!;
      expect(sealedChild.run_key!.master).toBe('k1');
      expect(sealedChild.header.sealed).toBe(sealedChild.run_key!.key);
      expect(sealedChild.spec.task).toMatch(/^sealed:1:/);
      const { rows } = await db.query<{ body: string }>('SELECT body FROM da_records WHERE run_id = $1', ['sealed-2']);
      for (const { body } of rows) for (const secret of [TASK, 'ACME Widgets Ltd', MESSAGE]) expect(body).not.toContain(secret);

      // A worker without the key leaves the sealed child alone; one with it runs both children to the end.
      await drive(db, agent);
      expect((await view(db, 'plain-2')).state).toBe('done');
      expect((await rowOf(db, 'sealed-2'))!.finished).toBe(false);
      await drive(db, agent, ring1);
      const done = await view(db, 'sealed-2', ring1);
      expect(done.state).toBe('done');
      expect(done.context.finalText).toBe(SECOND_ANSWER);
      expect(toolUseProblems(done.context.messages)).toEqual([]);
      expect(sent).toHaveLength(1);
    });
  });
});
