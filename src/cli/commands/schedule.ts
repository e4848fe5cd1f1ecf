/** `durable-agent schedule add|list|pause|resume|remove`: the fleet's schedules (fleet/schedules.ts). */
import { type Schedule, listSchedules, pauseSchedule, removeSchedule, resumeSchedule, scheduleRun } from '../../fleet/schedules.ts';
import { describeDatabase, openDatabase } from '../../store/pg/index.ts';
import { databaseUrlOf } from '../../store/pg/pool.ts';
import { tableLines } from '../../words/format.ts';
import { cliCommand, databaseWords } from '../../words/shell-command.ts';
import type { ScheduleArgs } from '../args.ts';
import { commandLineKeys } from '../command-line-keys.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';

export async function scheduleCommand(args: ScheduleArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  const url = databaseUrlOf(args.databaseUrl, env, `schedule ${args.action}`);
  const pool = await openDatabase(url, 2);
  try {
    switch (args.action) {
      case 'add': {
        const { name, agent, task, tenant, cron, timezone, catchUp, overlap, allowUnknownAgent, maxTurns, requireApproval, decisionTimeoutMs, budget } = args;
        // With the keys of the environment the task is kept sealed; only a worker holding them fires it.
        const keys = commandLineKeys(env);
        const { schedule, created } = await scheduleRun(pool, { name, agent, task, tenant, cron, timezone, catchUp, overlap, allowUnknownAgent, maxTurns, requireApproval, decisionTimeoutMs, budget, keys });
        writers.out(schedule.name);
        writers.err(
          created
            ? `[schedule] ${schedule.name} added in ${describeDatabase(url)}: its next tick ${tickWords(schedule.nextTickAt, schedule.timezone)}; the fleet's workers start its runs (${cliCommand(env, ['worker', '--agents', 'FILE', ...databaseWords(args.databaseUrl)])})` +
              (schedule.sealedUnder === null ? '' : `; its task is kept sealed under the master key ${schedule.sealedUnder}: only workers holding it fire its ticks`)
            : `[schedule] ${schedule.name} was there already, the same: nothing was changed`,
        );
        return EXIT.done;
      }
      case 'list': {
        const schedules = await listSchedules(pool, { keys: commandLineKeys(env) });
        if (args.json) {
          writers.out(JSON.stringify(schedules, null, 2));
          return EXIT.done;
        }
        if (schedules.length === 0) {
          writers.out(`no schedules in ${describeDatabase(url)} (add one: ${cliCommand(env, ['schedule', 'add', '--agent', 'NAME', '--cron', "'0 9 * * 1-5'", '--task', 'TEXT', ...databaseWords(args.databaseUrl)])})`);
          return EXIT.done;
        }
        for (const line of tableLines(['NAME', 'AGENT', 'CRON', 'ZONE', 'NEXT TICK', 'LAST RUN', 'STARTED', 'SKIPPED'], schedules.map(rowOf))) writers.out(line);
        return EXIT.done;
      }
      case 'pause': {
        const schedule = await pauseSchedule(pool, args.name);
        writers.out(`${schedule.name}: paused; its ticks start nothing until ${cliCommand(env, ['schedule', 'resume', '--name', schedule.name, ...databaseWords(args.databaseUrl)])}`);
        return EXIT.done;
      }
      case 'resume': {
        const schedule = await resumeSchedule(pool, args.name);
        writers.out(`${schedule.name}: resumed; its next tick ${tickWords(schedule.nextTickAt, schedule.timezone)}`);
        return EXIT.done;
      }
      case 'remove':
        await removeSchedule(pool, args.name);
        writers.out(`${args.name}: removed; the runs it started stay`);
        return EXIT.done;
    }
  } finally {
    await pool.end();
  }
}

function rowOf(schedule: Schedule): string[] {
  const next = schedule.paused ? 'paused' : schedule.nextTickAt ? schedule.nextTickAt.toISOString() : 'never';
  return [schedule.name, schedule.agent, schedule.cron, schedule.timezone, next, schedule.lastRunId ?? '-', String(schedule.started), String(schedule.skipped)];
}

/** A tick as its schedule's zone reads it, and in UTC. */
function tickWords(tick: Date | null, timezone: string): string {
  if (!tick) return 'never comes (the expression has no tick after now)';
  const local = new Intl.DateTimeFormat('sv-SE', { timeZone: timezone, dateStyle: 'short', timeStyle: 'medium' }).format(tick);
  return `is ${local} ${timezone} (${tick.toISOString()})`;
}
