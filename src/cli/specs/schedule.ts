/** `durable-agent schedule add|list|pause|resume|remove`: the fleet's schedules, their options and their parse. */
import type { Budget } from '../../../machines/agent-loop.types.ts';
import { command } from '../options/command.ts';
import { flagsNamed, option } from '../options/option.ts';
import { decisionTimeout, requireApproval, requiredApprovals } from '../options/approval.ts';
import { maxCostUsd, maxTotalTokens, readBudget } from '../options/budget.ts';
import { json } from '../options/output.ts';
import { maxTurns } from '../options/start-resume.ts';
import { databaseUrl } from '../options/target.ts';
import { tenant } from '../options/tenant.ts';
import { UsageError } from '../usage-error.ts';

export const SCHEDULE_ACTIONS = ['add', 'list', 'pause', 'resume', 'remove'] as const;
export type ScheduleAction = (typeof SCHEDULE_ACTIONS)[number];

export type ScheduleArgs = ScheduleAddArgs | ScheduleListArgs | ScheduleNamedArgs;

interface ScheduleTarget {
  command: 'schedule';
  databaseUrl: string | null;
}

export interface ScheduleAddArgs extends ScheduleTarget {
  action: 'add';
  name: string | undefined;
  agent: string;
  task: string;
  tenant: string | undefined;
  cron: string;
  timezone: string | undefined;
  catchUp: number | undefined;
  overlap: 'allow' | 'skip' | undefined;
  allowUnknownAgent: boolean;
  maxTurns: number | undefined;
  requireApproval: string[] | 'side-effects' | undefined;
  decisionTimeoutMs: number | undefined;
  budget: Budget | undefined;
}

export interface ScheduleListArgs extends ScheduleTarget {
  action: 'list';
  json: boolean;
}

export interface ScheduleNamedArgs extends ScheduleTarget {
  action: 'pause' | 'resume' | 'remove';
  name: string;
}

/** The options only `add` takes. */
const ADD_ONLY = ['agent', 'task', 'tenant', 'cron', 'timezone', 'catchUp', 'overlap', 'allowUnknownAgent', 'maxTurns', 'requireApproval', 'decisionTimeoutMs', 'maxCostUsd', 'maxTotalTokens'] as const;

export const scheduleSpec = command({
  name: 'schedule',
  words: [],
  arguments: [{ name: 'ACTION', help: `what to do: ${SCHEDULE_ACTIONS.join(', ')}` }],
  synopsis: 'schedule (add | list | pause | resume | remove) [--name NAME] [options]',
  summary: "start an agent's task at each tick of a cron expression, once per tick across the fleet's workers",
  description:
    "add: each tick of the cron expression (five fields, or six with the seconds first), read in --timezone,\n" +
    'queues one run of TASK for the agent, whose id is the name and the tick (NAME.20261207T080000Z): however many\n' +
    'workers run and whatever is killed when, a tick starts one run. Ticks missed while no worker ran are caught\n' +
    'up, the latest --catch-up of them, or skipped; with --overlap skip (the default) a tick while the last run\n' +
    'goes on starts nothing. Adding the same schedule again changes nothing. list: every schedule, its next tick\n' +
    'and its last run. pause: its ticks start nothing; resume: it goes on from its next tick (the ticks that fell\n' +
    'while paused start nothing). remove: no tick of it starts anything; its runs stay.',
  options: [
    databaseUrl,
    option({ key: 'name', type: 'string', value: 'NAME', help: "the schedule's name: its runs' ids begin with it (default for add: the agent's name)", api: 'ScheduleOptions.name' }),
    option({ key: 'agent', type: 'string', value: 'NAME', help: 'the agent that runs the task at each tick (as its definition names it)', api: 'ScheduleOptions.agent' }),
    option({ key: 'task', type: 'string', value: 'TEXT', help: "each run's task (its first user message)", api: 'ScheduleOptions.task' }),
    { ...tenant, help: "whose its runs are: pinned in each, shown by list and status", api: 'ScheduleOptions.tenant' },
    option({ key: 'cron', type: 'string', value: 'EXPR', help: "when it ticks: '0 9 * * 1-5' (minute hour day month weekday), or six fields with the seconds first", api: 'ScheduleOptions.cron' }),
    option({ key: 'timezone', type: 'string', value: 'ZONE', help: 'the IANA time zone the expression is read in (Europe/Paris)', defaultText: 'UTC', api: 'ScheduleOptions.timezone' }),
    option({ key: 'catchUp', type: 'integer', value: 'N', help: 'how many ticks missed while no worker ran are started late, the latest ones (0: none)', min: 0, max: 1_000, defaultText: '1', api: 'ScheduleOptions.catchUp' }),
    option({ key: 'overlap', type: 'string', value: 'allow|skip', help: "skip: a tick while the schedule's last run goes on starts nothing; allow: it starts one beside it", defaultText: 'skip', api: 'ScheduleOptions.overlap' }),
    option({ key: 'allowUnknownAgent', type: 'boolean', help: 'add it although no worker has registered that agent yet', api: 'ScheduleOptions.allowUnknownAgent' }),
    { ...maxTurns, help: 'each run stops cleanly after N tool-using turns', defaultText: "the agent's, or 20" },
    { ...requireApproval, help: `${requireApproval.help}; pinned in each run` },
    decisionTimeout,
    { ...maxCostUsd, help: "each run's worker stops it (final state stoppedAtBudget) before a model call once it has cost USD dollars at list prices" },
    { ...maxTotalTokens, help: "each run's worker stops it (final state stoppedAtBudget) before a model call once it has used N tokens" },
    json,
  ],
  examples: [
    "durable-agent schedule add --agent report --cron '0 9 * * 1-5' --timezone Europe/Paris --task 'Report.'",
    "durable-agent schedule add --name sync --agent billing --cron '*/10 * * * * *' --task Sync --overlap allow",
    'durable-agent schedule list',
    'durable-agent schedule pause --name report',
  ],
  parse: (values, { positionals }): ScheduleArgs => {
    const action = positionals[0] as ScheduleAction;
    if (!(SCHEDULE_ACTIONS as readonly string[]).includes(action)) throw new UsageError(`schedule takes one of ${SCHEDULE_ACTIONS.join(', ')}, not ${JSON.stringify(positionals[0])}.`);
    const target = { command: 'schedule' as const, databaseUrl: values.databaseUrl ?? null };
    if (action === 'add') {
      if (values.agent === undefined) throw new UsageError('schedule add needs --agent NAME: the agent that runs the task.');
      if (values.cron === undefined) throw new UsageError("schedule add needs --cron 'EXPR': when it ticks (e.g. '0 9 * * 1-5').");
      if (values.task === undefined || values.task.trim() === '') throw new UsageError('schedule add needs --task TEXT: what each run is to do.');
      if (values.overlap !== undefined && values.overlap !== 'allow' && values.overlap !== 'skip') throw new UsageError(`--overlap takes allow or skip, not ${JSON.stringify(values.overlap)}.`);
      return {
        ...target,
        action,
        name: values.name,
        agent: values.agent,
        task: values.task,
        tenant: values.tenant,
        cron: values.cron,
        timezone: values.timezone,
        catchUp: values.catchUp,
        overlap: values.overlap,
        allowUnknownAgent: values.allowUnknownAgent,
        maxTurns: values.maxTurns,
        requireApproval: requiredApprovals(values.requireApproval),
        decisionTimeoutMs: values.decisionTimeoutMs,
        budget: readBudget(values),
      };
    }
    const addOnly = ADD_ONLY.filter((key) => {
      const value = (values as Record<string, unknown>)[key];
      return value !== undefined && value !== false;
    });
    if (addOnly.length > 0) throw new UsageError(`${flagsNamed(addOnly)} ${addOnly.length === 1 ? 'is' : 'are'} for schedule add.`);
    if (action === 'list') return { ...target, action, json: values.json };
    if (values.name === undefined) throw new UsageError(`schedule ${action} needs --name NAME: the schedule (schedule list shows their names).`);
    return { ...target, action, name: values.name };
  },
});
