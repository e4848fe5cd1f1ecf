/** `durable-agent list`: its options and their parse. */
import type { AgentStateName } from '../../../machines/agent-loop.types.ts';
import { UsageError } from '../usage-error.ts';
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { json } from '../options/output.ts';
import { shorten } from '../options/read-options.ts';
import { databaseUrl, readDir } from '../options/target.ts';
import { tenantFilter } from '../options/tenant.ts';

/** What --state takes: the machine's resting states, and the words status prints for them. */
const STATES: Record<string, readonly AgentStateName[]> = {
  running: ['awaitingModel', 'pendingTool', 'effectRecorded', 'closed', 'compacting'],
  waiting: ['awaitingDecision'],
  done: ['done'],
  failed: ['failed'],
  cancelled: ['cancelled'],
  stopped: ['stoppedAtMaxTurns', 'stoppedAtBudget'],
};

export interface ListArgs {
  command: 'list';
  dir: string;
  dirGiven: boolean;
  databaseUrl: string | null;
  /** The states asked for; null: all. */
  states: readonly AgentStateName[] | null;
  /** The tenant asked for; null: every tenant's runs. */
  tenant: string | null;
  /** --limit N: at most N runs (a page); null: every run. */
  limit: number | null;
  /** --after ID: the page after the run of that id (the last one a page printed); null: from the start. */
  after: string | null;
  json: boolean;
}

export const listSpec = command({
  name: 'list',
  words: [],
  synopsis: 'list [--dir DIR | --database-url URL] [--state STATE] [--tenant NAME] [options]',
  summary: 'every run of a folder (current, by id, archived) or of a fleet: id, state, task, turn, last save',
  description:
    'Lists the runs kept in DIR/.durable-agent/: the run of the folder itself, the runs started by id (--run ID), and\n' +
    'the archived ones, newest first, with the run each was forked from. With --database-url (or\n' +
    'DURABLE_AGENT_DATABASE_URL and no --dir) it lists the runs of the fleet instead, as status does.\n' +
    'A long list comes in pages: --limit N prints N runs, --after ID the ones after the run ID (the last one printed),\n' +
    "each page read from where the last one ended, so that runs added meanwhile neither repeat one nor skip one.",
  options: [
    readDir,
    databaseUrl,
    option({
      key: 'state',
      type: 'string',
      value: 'STATE',
      help: `only the runs in this state: ${Object.keys(STATES).join(', ')} (or a machine state, e.g. awaitingDecision)`,
    }),
    option({ key: 'limit', type: 'integer', value: 'N', min: 1, max: 1_000_000, help: 'at most N runs: a page' }),
    option({ key: 'after', type: 'string', value: 'ID', help: 'the runs after the run ID in the list (the last one a page printed): the next page' }),
    tenantFilter,
    json,
  ],
  examples: ['durable-agent list --dir my-project', 'durable-agent list --dir my-project --state waiting --json', 'durable-agent list --tenant acme', 'durable-agent list --database-url postgresql://user@db-host:5432/agents --limit 100 --after RUN_ID'],
  parse: (values, { cwd }): ListArgs => {
    if (values.dir !== undefined && values.databaseUrl !== undefined) {
      throw new UsageError('list reads either the runs in --dir or the fleet at --database-url, not both: give one of them.');
    }
    return {
      command: 'list',
      dir: values.dir ?? cwd,
      dirGiven: values.dir !== undefined,
      databaseUrl: values.databaseUrl ?? null,
      states: statesOf(values.state),
      limit: values.limit ?? null,
      after: values.after ?? null,
      tenant: values.tenant ?? null,
      json: values.json,
    };
  },
});

const MACHINE_STATES = new Set(Object.values(STATES).flat());

function statesOf(text: string | undefined): readonly AgentStateName[] | null {
  if (text === undefined) return null;
  const named = STATES[text];
  if (named) return named;
  if (MACHINE_STATES.has(text as AgentStateName)) return [text as AgentStateName];
  throw new UsageError(`--state takes ${Object.keys(STATES).join(', ')} or a state of the machine (awaitingDecision, stoppedAtBudget…), not "${shorten(text)}".`);
}
