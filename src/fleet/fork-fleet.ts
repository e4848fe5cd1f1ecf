/**
 * Forking a fleet run into a new fleet run: forkRun (src/fork/) over two fleet stores. The
 * parent's records 0..SEQ (and, with a message, the REOPEN record that continues it) go under a
 * new run row with the parent's spec, in one transaction (PgRunStore.createFork), so a crash
 * leaves the whole child or none. The parent's rows are only read. An unfinished child is
 * claimable at once: a worker resumes it like any run whose worker died.
 */
import { randomUUID } from 'node:crypto';
import { isFinishedState } from '../../machines/agent-loop.types.ts';
import { type ForkResult, forkRun } from '../fork/fork-run.ts';
import type { KeysGiven } from '../seal/keys.ts';
import type { Database } from '../store/pg/pool.ts';
import { openDatabaseStore } from '../store/pg/open-database-store.ts';

export interface FleetForkOptions {
  /** The parent: a fleet run's id. */
  run: string;
  /** The new run's id (default: a new UUID); refused when a run of that id exists. */
  toRun?: string | undefined;
  at?: number | undefined;
  message?: string | undefined;
  maxTurns?: number | undefined;
  /**
   * The master keys: a sealed parent is opened with them, and the child is sealed under a run key
   * of its own (in its row), wrapped by the first of them, its task too. Without them a sealed
   * parent is refused, naming its key, nothing written.
   */
  keys?: KeysGiven | undefined;
}

export interface FleetForkResult extends Omit<ForkResult, 'lineageNoteProblem'> {
  /** The new run's id in da_runs (its journal's run id is `runId`). */
  fleetRun: string;
  /** A child forked at a final state without a message is finished (stopped at a limit: until raised): no worker takes it up. */
  finished: boolean;
}

export async function forkFleetRun(pool: Database, options: FleetForkOptions): Promise<FleetForkResult> {
  const toRun = options.toRun ?? randomUUID();
  const { lineageNoteProblem: _none, ...forked } = await forkRun({
    from: openDatabaseStore(pool, options.run),
    to: openDatabaseStore(pool, toRun),
    at: options.at,
    message: options.message,
    maxTurns: options.maxTurns,
    keys: options.keys,
  });
  // The fields in the order fork --json has always printed them.
  const { runId, location, ...rest } = forked;
  return { runId, fleetRun: toRun, location, ...rest, finished: isFinishedState(forked.state) };
}
