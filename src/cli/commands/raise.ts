/**
 * `durable-agent raise --run ID`: larger limits for a fleet run stopped at one. The raise is
 * committed to PostgreSQL before this returns; a worker of the fleet takes the run up with it.
 */
import os from 'node:os';
import type { Budget } from '../../../machines/agent-loop.types.ts';
import type { RaiseArgs } from '../args.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';
import { cliCommand } from '../../words/shell-command.ts';
import { userName } from '../user-name.ts';

export async function raiseCommand(args: RaiseArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  const { openDatabase, databaseUrlOf } = await import('../../store/pg/pool.ts');
  const { raiseFleetRun, raiseWords } = await import('../../fleet/raise-run.ts');
  const pool = await openDatabase(databaseUrlOf(args.databaseUrl, env, 'raise --run'), 2);
  try {
    const budget: Budget = {
      ...(args.maxCostUsd !== null ? { maxCostUsd: args.maxCostUsd } : {}),
      ...(args.maxTotalTokens !== null ? { maxTotalTokens: args.maxTotalTokens } : {}),
    };
    const raised = await raiseFleetRun(pool, {
      run: args.fleetRun,
      ...(args.maxTurns !== null ? { maxTurns: args.maxTurns } : {}),
      ...(Object.keys(budget).length ? { budget } : {}),
      by: args.by ?? `${userName()}@${os.hostname()} (pid ${process.pid})`,
    });
    writers.out(`[raise] fleet run ${args.fleetRun} (${raised.state}, turn ${raised.turn}) raised: ${raiseWords(raised.request)}.`);
    writers.out(
      `A worker of the fleet claims it and goes on from where it stopped, nothing run again; ${cliCommand(env, ['status', '--database-url', 'URL'])} shows it ` +
        'raised until then.',
    );
    return EXIT.done;
  } finally {
    await pool.end();
  }
}
