/**
 * A SIGKILL at each point of a schedule's firing, generated: the firing is run once whole to count
 * its statements, then once per statement killed before it is sent and once killed just after its
 * answer (so after COMMIT too). After each kill a worker's next firing runs; each tick due then
 * has exactly one run, its id the schedule's name and the tick, and a later firing starts none.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { registerAgents } from '../../src/fleet/agent-registry.ts';
import { listQueuedRuns } from '../../src/fleet/run-queue.ts';
import { fireDueSchedules, listSchedules, scheduleRun } from '../../src/fleet/schedules.ts';
import { migrate } from '../../src/store/pg/schema.ts';
import { REPO } from '../helpers/cli.ts';
import { freshDatabase, postgresAvailable, usePostgres, withDb } from '../helpers/use-postgres.ts';

const FIXTURE = path.join(REPO, 'test', 'fixtures', 'fire-schedules-killed.mjs');
const CAUGHT_UP = 3;
const run = promisify(execFile);

/**
 * A fleet database with a yearly schedule whose ticks since 2020 are due, all of them late: the
 * latest three are caught up. (Yearly: the ticks due change only at a new year, not during a test.)
 */
async function dueSchedule(): Promise<string> {
  const url = await freshDatabase();
  await withDb(url, async (db) => {
    await migrate(db);
    await registerAgents(db, [{ name: 'billing', version: 'v1', tools: [] } as never], 'test-worker');
    await scheduleRun(db, { name: 'yearly', agent: 'billing', task: 'Invoice ACME.', cron: '0 0 1 1 *', catchUp: CAUGHT_UP, overlap: 'allow' });
    await db.query(`UPDATE da_schedules SET next_tick_at = '2020-01-01T00:00:00Z' WHERE name = 'yearly'`);
  });
  return url;
}

/** Runs the firing in a process of its own; the exit is SIGKILL when it was killed, else its output. */
async function fireKilled(url: string, statement: number, mode: 'before' | 'after'): Promise<{ killed: boolean; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, [FIXTURE, url, String(statement), mode], { cwd: REPO });
    return { killed: false, stdout };
  } catch (error) {
    const signal = (error as { signal?: string }).signal;
    if (signal !== 'SIGKILL') throw error;
    return { killed: true, stdout: '' };
  }
}

describe.skipIf(!postgresAvailable())('a SIGKILL at each point of a schedule firing', () => {
  usePostgres({ prefix: 'schedule_kills' });

  it('never leaves a tick with two runs, nor a due tick without its run once a worker fires again', async () => {
    const whole = await fireKilled(await dueSchedule(), Number.MAX_SAFE_INTEGER, 'before');
    const statements = Number(/statements (\d+)/.exec(whole.stdout)?.[1]);
    // BEGIN, the clock, the locked schedules, a run per tick, the schedule's row, COMMIT.
    expect(statements).toBeGreaterThanOrEqual(4 + CAUGHT_UP);
    const points = Array.from({ length: statements }, (_, statement) => (['before', 'after'] as const).map((mode) => ({ statement, mode }))).flat();
    // Two kills at a time, each on a database of its own.
    const next = points.values();
    const killOne = async ({ statement, mode }: { statement: number; mode: 'before' | 'after' }) => {
      const url = await dueSchedule();
      const { killed } = await fireKilled(url, statement, mode);
      expect(killed, `statement ${statement} ${mode}`).toBe(true);
      await withDb(url, async (db) => {
        // The killed firing's transaction ends when the server sees its connection gone; until
        // then its schedule is locked and skipped, so the next firing is tried until it is not due.
        while ((await listSchedules(db))[0]!.nextTickAt!.getTime() <= Date.now()) {
          await fireDueSchedules(db);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const runs = (await listQueuedRuns(db)).filter((queued) => queued.spec.kind === 'agent' && queued.spec.schedule?.name === 'yearly');
        const ticks = runs.map((queued) => (queued.spec.kind === 'agent' ? queued.spec.schedule!.tick : ''));
        expect(new Set(ticks).size, `statement ${statement} ${mode}: one run a tick`).toBe(runs.length);
        expect(runs, `statement ${statement} ${mode}: the ${CAUGHT_UP} ticks caught up`).toHaveLength(CAUGHT_UP);
        for (const queued of runs) expect(queued.id).toBe(`yearly.${ticks[runs.indexOf(queued)]!.replace(/[-:]|\.\d+/g, '')}`);
        const [schedule] = await listSchedules(db);
        expect(schedule).toMatchObject({ started: CAUGHT_UP });
        expect((await fireDueSchedules(db)).started).toEqual([]);
      });
    };
    await Promise.all([0, 1].map(async () => {
      for (const point of next) await killOne(point);
    }));
  }, 600_000);
});
