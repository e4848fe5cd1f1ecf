/**
 * Forking a fleet run into a new fleet run: the parent's records 0..SEQ (and, with a message,
 * the REOPEN record that continues it) under a new run row with the parent's spec, in one
 * transaction, so a crash leaves the whole child or none. The parent's rows are only read. An
 * unfinished child is claimable at once: a worker resumes it like any run whose worker died.
 */
import { randomUUID } from 'node:crypto';
import { isFinishedState } from '../../machines/agent-loop.types.ts';
import { ForkRefusedError } from '../fork/fork-errors.ts';
import { planFork } from '../fork/fork-plan.ts';
import type { ForkResult } from '../fork/fork-run.ts';
import { checkMessageText } from '../core/continue-run.ts';
import { documentJson } from '../store/journal/framing.ts';
import { insertForkedRun } from '../store/pg/fork-rows.ts';
import { openStore } from '../store/open-store.ts';
import type { Database } from '../store/pg/pool.ts';

export interface FleetForkOptions {
  /** The parent: a fleet run's id. */
  run: string;
  /** The new run's id (default: a new UUID); refused when a run of that id exists. */
  toRun?: string | undefined;
  at?: number | undefined;
  message?: string | undefined;
  maxTurns?: number | undefined;
}

export interface FleetForkResult extends Omit<ForkResult, 'lineageNoteProblem'> {
  /** The new run's id in da_runs (its journal's run id is `runId`). */
  fleetRun: string;
  /** A child forked at a final state without a message is finished (stopped at a limit: until raised): no worker takes it up. */
  finished: boolean;
}

export async function forkFleetRun(pool: Database, options: FleetForkOptions): Promise<FleetForkResult> {
  const parent = openStore({ database: pool, runId: options.run });
  if (options.message !== undefined) checkMessageText(parent.location, options.message);
  const toRun = options.toRun ?? randomUUID();
  if (toRun === options.run) throw new ForkRefusedError(parent.location, 'same-run', 'the fork would go where the run is: give another --to-run ID (or none for a new one). Nothing was written.');
  const plan = planFork(parent.location, await parent.load(), options, Date.now(), options.run);
  const bodies = plan.records.map((record) => documentJson(record));
  // A child forked where its parent stopped at a limit is stopped too, not finished: a raise lets it go on.
  const finished = isFinishedState(plan.state);
  const written = await insertForkedRun(pool, {
    parentRun: options.run,
    toRun,
    header: plan.header,
    state: plan.state,
    turn: plan.turn,
    finished,
    awaiting: plan.awaiting?.tool_use_id ?? null,
    awaitingSince: plan.awaiting?.since ?? null,
    bodies,
  });
  if (!written) {
    throw new ForkRefusedError(parent.location, 'target-holds-run', `a fleet run ${toRun} already exists: give another --to-run ID (or none for a new one). Nothing was written.`);
  }
  return {
    runId: plan.header.runId,
    fleetRun: toRun,
    location: `PostgreSQL run ${toRun}`,
    forkedFrom: plan.header.forkedFrom!,
    parentLastSeq: plan.lastSeq,
    state: plan.state,
    records: plan.records.length,
    openCalls: plan.openCalls.map((call) => ({ id: call.id, name: call.name })),
    afterFork: plan.afterFork,
    finished,
  };
}
