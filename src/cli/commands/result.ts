/**
 * `durable-agent result --run ID [--wait]`: a fleet run's state and answer, the exit code saying
 * where it rests. With --wait the database wakes the command when the run comes to rest.
 */
import type { FleetRunResult, FleetRunState } from '../../fleet/await-run.ts';
import type { ResultArgs } from '../specs/result.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';
import { cliCommand } from '../../words/shell-command.ts';
import { budgetReachedWords } from '../../budget/budget-words.ts';
import { commandLineKeys } from '../command-line-keys.ts';
import { contentWords } from '../../words/sealed-words.ts';

/** The codes demo and run end with for the same states (drive-run.ts), so that scripts read both alike. */
const EXIT_AT_REST: Partial<Record<FleetRunState, number>> = {
  done: EXIT.done,
  failed: EXIT.runFailed,
  cancelled: EXIT.cancelled,
  awaitingDecision: EXIT.waitingForPerson,
  stoppedAtMaxTurns: EXIT.stoppedAtMaxTurns,
  stoppedAtBudget: EXIT.budgetReached,
};

export async function resultCommand(args: ResultArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  const { openDatabase, databaseUrlOf } = await import('../../store/pg/pool.ts');
  const { awaitRun, readFleetRun } = await import('../../fleet/await-run.ts');
  // Two connections: the wait's LISTEN, and the read of the journal once the run rests.
  const pool = await openDatabase(databaseUrlOf(args.databaseUrl, env, 'result --run'), 2);
  // A sealed run's answer opens with the keys of the environment; without them it is said sealed, never shown.
  const keys = commandLineKeys(env);
  try {
    let result: FleetRunResult;
    if (args.wait) {
      const interrupt = new AbortController();
      const onSignal = () => interrupt.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        result = await awaitRun(pool, args.fleetRun, { ...(args.timeoutMs !== null ? { timeoutMs: args.timeoutMs } : {}), signal: interrupt.signal, keys });
      } catch (error) {
        if (!interrupt.signal.aborted) throw error;
        writers.err(`[interrupted] stopped waiting; fleet run ${args.fleetRun} goes on. ${cliCommand(env, ['result', '--run', args.fleetRun, '--wait'])} waits again.`);
        return EXIT.interrupted;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    } else {
      result = await readFleetRun(pool, args.fleetRun, keys);
    }
    if (args.json) writers.out(JSON.stringify(result, null, 2));
    else for (const line of resultLines(result, env)) writers.out(line);
    // Not at rest yet: the answer is still to come, as after an interrupt (ask again, or --wait).
    return result.resting ? (EXIT_AT_REST[result.state] ?? EXIT.internal) : EXIT.interrupted;
  } finally {
    await pool.end();
  }
}

function resultLines(result: FleetRunResult, env: NodeJS.ProcessEnv): string[] {
  const id = result.runId;
  const run = (...words: string[]) => cliCommand(env, [...words, '--run', id]);
  const tokens = `${result.usage.input} input and ${result.usage.output} output tokens`;
  const head = `fleet run ${id}: ${result.state}, turn ${result.turn}, ${tokens}`;
  if (!result.resting) {
    const going = result.state === 'queued' ? 'queued: no worker has taken it up yet' : RESTING_BUT_TAKEN_ON.has(result.state) ? 'about to go on: a worker takes it up with what was given' : 'running';
    return [head, `[${result.state === 'queued' ? 'queued' : 'running'}] ${going}. ${run('result')} --wait waits for its result.`];
  }
  switch (result.state) {
    case 'done':
      return [head, `[done] ${contentWords(result.text ?? '')}`];
    case 'failed':
      return [head, `[failed] ${result.failure ?? 'the run failed'}`];
    case 'cancelled':
      return [head, `[cancelled] the run was cancelled; it ends here (${run('fork')} --to-run NEW_ID can try again from one of its steps).`];
    case 'awaitingDecision':
      return [head, `[waiting] ${result.waiting.join(', ') || 'a call'} waits for a person's decision: ${run('pending')} shows it; approve, deny or answer --run ${id} give it, and a worker goes on.`];
    case 'stoppedAtMaxTurns':
      return [head, `[stop] stopped at its MAX_TURNS, resumable: ${run('raise')} --max-turns N (more than it had) goes on.`];
    case 'stoppedAtBudget': {
      const stop = result.budgetStop;
      if (stop?.tenant !== undefined) {
        const flag = stop.budget === 'cost' ? '--max-cost-usd-month USD' : '--max-tokens-month N';
        return [head, `[budget] ${budgetReachedWords(stop)}; resumable: ${cliCommand(env, ['tenant', 'set', stop.tenant])} ${flag} (larger) lets it go on now; the workers go on with it by themselves when the month turns.`];
      }
      return [head, `[budget] stopped at its budget, resumable: ${run('raise')} --max-total-tokens N (or --max-cost-usd USD) goes on.`];
    }
    default:
      return [head];
  }
}

/** Resting states a decision, its deadline or a raise takes on: the run is not at rest although its state is. */
const RESTING_BUT_TAKEN_ON = new Set<FleetRunState>(['awaitingDecision', 'stoppedAtMaxTurns', 'stoppedAtBudget']);
