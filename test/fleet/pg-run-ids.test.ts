/**
 * Run ids on PostgreSQL: the id is the run's key, and starting under one that exists attaches,
 * as in a file store: three starts run the side effect once, a kill at any point of the path
 * (the one after the final record included) and two more starts make the checkable charge once,
 * and an id started with another task is refused with nothing written.
 */
import { describe, expect, it } from 'vitest';
import { RunIdTakenError } from '../../src/errors.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { endTurnReply, scriptedModel, SimulatedCrash, toolUseReply } from '../../src/testing.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, pool, postgresAvailable, usePostgres, withDb } from '../helpers/use-postgres.ts';

const chargeScript = () => [toolUseReply([{ id: 'toolu_charge', name: 'charge_card', input: { amount: 42 } }]), endTurnReply('charged')];
const POINTS = ['after-save-start:1', 'after-model-reply:1', 'after-save-a:1', 'after-tool-return:1', 'after-effect-write:1', 'after-save-b:1', 'after-model-reply:2', 'after-save-done:1'];

describe.skipIf(!postgresAvailable())('run ids on PostgreSQL', () => {
  usePostgres();

  it('three starts with the same id: the side effect once, the stored result twice; the header carries the id', async () => {
    const { tools, counter } = countingTools();
    const start = () => startRun({ store: new PgRunStore(pool, 'order-42', { leaseMs: 60_000 }), model: scriptedModel(chargeScript()), tools, task: 'Charge order 42' });
    const results = [await start(), await start(), await start()];
    expect(counter.of('toolu_charge')).toBe(1);
    expect(results.map((r) => [r.runId, r.status, r.text])).toEqual(Array(3).fill(['order-42', 'done', 'charged']));
    expect((await new PgRunStore(pool, 'order-42').load()).header.runId).toBe('order-42');
  });

  it.each(POINTS)('killed at %s, then started twice more: charged exactly once', async (point) => {
    const id = `charge-${point.replace(/[^a-z0-9]/g, '-')}`;
    const { tools, counter, charged } = countingTools();
    const start = (crashAfter?: string) =>
      startRun({ store: new PgRunStore(pool, id, { leaseMs: 60_000 }), model: scriptedModel(chargeScript()), tools, task: 'Charge 42', ...(crashAfter ? { crashAfter } : {}) });
    await expect(start(point)).rejects.toThrow(SimulatedCrash);
    const afterKill = await start();
    expect(await start()).toEqual(afterKill);
    expect(afterKill).toMatchObject({ runId: id, status: 'done' });
    expect(counter.of('toolu_charge')).toBe(1);
    expect(charged.size).toBe(1);
  });

  it('refuses an id started with another task, writing nothing', async () => {
    const { tools } = countingTools();
    await startRun({ store: new PgRunStore(pool, 'order-43', { leaseMs: 60_000 }), model: scriptedModel(chargeScript()), tools, task: 'Charge order 43' });
    const records = async () => (await pool.query('SELECT count(*)::int AS n FROM da_records WHERE run_id = $1', ['order-43'])).rows[0].n;
    const before = await records();
    await expect(startRun({ store: new PgRunStore(pool, 'order-43', { leaseMs: 60_000 }), model: scriptedModel(chargeScript()), tools, task: 'Charge order 44' })).rejects.toThrow(RunIdTakenError);
    expect(await records()).toBe(before);
  });

  it('list --database-url: the runs of the fleet by id with their states; --state picks', async () => {
    const url = await freshDatabase();
    await withDb(url, async (db) => {
      const { tools } = countingTools();
      const start = (id: string, crashAfter?: string) =>
        startRun({ store: new PgRunStore(db, id, { leaseMs: 60_000 }), model: scriptedModel(chargeScript()), tools, task: `Charge ${id}`, ...(crashAfter ? { crashAfter } : {}) });
      await start('order-1');
      await start('order-2');
      await expect(start('order-3', 'after-save-a:1')).rejects.toThrow(SimulatedCrash);
    });
    const cli = (args: string[]) => runCliAsync(args, { cwd: tempDir() });
    const all = await cli(['list', '--database-url', url]);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toMatch(/order-1 +done/);
    expect(all.stdout).toMatch(/order-2 +done/);
    expect(all.stdout).toMatch(/order-3 +pendingTool/);
    expect(all.stdout).toContain('3 runs: 2 done, 1 unfinished');
    const running = await cli(['list', '--database-url', url, '--state', 'running', '--json']);
    expect(running.code, running.stderr).toBe(0);
    expect((JSON.parse(running.stdout) as Array<{ id: string }>).map((run) => run.id)).toEqual(['order-3']);
  });
});
