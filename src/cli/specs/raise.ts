/** `durable-agent raise`: its options and their parse. */
import { UsageError } from '../usage-error.ts';
import { command } from '../options/command.ts';
import { maxCostUsd, maxTotalTokens } from '../options/budget.ts';
import { maxTurns } from '../options/start-resume.ts';
import { fleetDatabaseUrl, fleetRun } from '../options/target.ts';
import { by } from './decide.ts';

/** raise --run ID: larger limits for a fleet run stopped at one. */
export interface RaiseArgs {
  command: 'raise';
  fleetRun: string;
  databaseUrl: string | null;
  maxTurns: number | null;
  maxCostUsd: number | null;
  maxTotalTokens: number | null;
  /** --by, else the CLI's user name with host and pid (filled in by the command). */
  by: string | null;
}

export const raiseSpec = command({
  name: 'raise',
  words: [],
  synopsis: 'raise --run ID (--max-total-tokens N | --max-cost-usd USD | --max-turns N) [--by NAME]',
  summary: 'give a fleet run stopped at its budget or MAX_TURNS a larger limit: a worker takes it up and goes on',
  description:
    'A fleet run stopped at a limit (stoppedAtBudget, stoppedAtMaxTurns) rests, resumable, until its limit is raised:\n' +
    'the raise is kept in PostgreSQL before this returns, and a worker of the fleet claims the run and goes on from\n' +
    'where it stopped (the reply held at MAX_TURNS acted on, or the model call the budget stopped made), nothing run\n' +
    'again. Each limit given must be larger than the run\'s own, the one it stopped at among them, and above what the\n' +
    'run has used; the others stay. Anything else is refused (exit 2), nothing written. A run in a directory is\n' +
    'resumed with the larger limit instead: demo --resume (or run --resume) --max-total-tokens N.',
  options: [
    fleetRun('the fleet run stopped at a limit (required; status --database-url lists them)'),
    fleetDatabaseUrl,
    { ...maxCostUsd, help: "the run's new cost budget in US dollars at list prices, larger than its own", api: 'budget.maxCostUsd' },
    { ...maxTotalTokens, help: "the run's new token budget, larger than its own", api: 'budget.maxTotalTokens' },
    { ...maxTurns, help: "the run's new MAX_TURNS (its total, as on a resume), larger than its own", defaultText: "the run's", api: 'FleetRaiseOptions.maxTurns' },
    { ...by, help: 'who raises, as status shows it', api: 'FleetRaiseOptions.by' },
  ],
  examples: [
    'durable-agent raise --database-url postgresql://user@db-host/agents --run RUN_ID --max-total-tokens 9000',
    'durable-agent raise --run RUN_ID --max-turns 40',
  ],
  parse: (values): RaiseArgs => {
    if (values.run === undefined) {
      throw new UsageError(
        'raise gives a fleet run stopped at a limit more: it needs --run ID. A run in a directory is resumed with the larger limit: durable-agent demo --resume --dir DIR --max-total-tokens N (or run --resume).',
      );
    }
    if (values.maxTurns === undefined && values.maxCostUsd === undefined && values.maxTotalTokens === undefined) {
      throw new UsageError('raise needs the limit to raise: --max-total-tokens N, --max-cost-usd USD or --max-turns N (larger than the run\'s own; status --database-url shows it).');
    }
    return {
      command: 'raise',
      fleetRun: values.run,
      databaseUrl: values.databaseUrl ?? null,
      maxTurns: values.maxTurns ?? null,
      maxCostUsd: values.maxCostUsd ?? null,
      maxTotalTokens: values.maxTotalTokens ?? null,
      by: values.by ?? null,
    };
  },
});
