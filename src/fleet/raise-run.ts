/**
 * Raising the limits of a fleet run that stopped at one (`durable-agent raise --run ID`): the
 * fleet's way to do what a file run's `--resume --max-turns N` or `--max-cost-usd X` does. The
 * raise is a request of kind 'raise' in da_controls, inserted in one transaction that holds the
 * run's row and checks that the run is still where the request was worked out from; from then on
 * the run is claimable (WORKABLE in leases.ts). The worker that claims it reads the request with
 * its lease and resumes the run with those limits: the machine's REOPEN takes the run from where
 * it stopped (the held reply acted on, or the model call the budget stopped), nothing run again,
 * and the REOPEN record deletes the request in its own statement (append-statement.ts).
 *
 * Only a larger limit is a raise: a limit the run does not have, one not above the run's own, or
 * a raise that would leave the run stopped where it is, is refused with nothing written.
 */
import { totalTokens } from '../../machines/agent-loop.logic.ts';
import { type AgentContext, type AgentStateName, type Budget, isStoppedAtLimit } from '../../machines/agent-loop.types.ts';
import { checkBudget } from '../budget/budget.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import { snapshotContextOf } from '../store/journal/journal-codec.ts';
import type { Database } from '../store/pg/pool.ts';
import { insertRaiseRequest, readRaiseRequest } from '../store/pg/raises.ts';
import { type LimitName, LimitNotRaisedError, RaiseRefusedError, type RaiseRequest } from './raise-errors.ts';
import { openDatabaseStore } from '../store/pg/open-database-store.ts';

export { LimitNotRaisedError, RaiseRefusedError, raiseWords } from './raise-errors.ts';
export type { LimitName, RaiseProblem, RaiseRequest } from './raise-errors.ts';

/** The most turns a run may be given (the command line's --max-turns range). */
const MAX_TURNS_LIMIT = 100_000;

export interface FleetRaiseOptions {
  /** The fleet run: its id in da_runs. */
  run: string;
  /** The run's new MAX_TURNS (its total, as on a resume): larger than the one it has. */
  maxTurns?: number | undefined;
  /** New spending limits, each larger than the run's own (a limit not given stays). */
  budget?: Budget | undefined;
  /** Who asks, as status shows it (default 'api'). */
  by?: string | undefined;
}

export interface FleetRaiseResult {
  run: string;
  /** Where the run rests until a worker takes it up. */
  state: AgentStateName;
  turn: number;
  /** The limit the run stopped at. */
  stoppedAt: LimitName;
  /** The run's limits before the raise. */
  before: { maxTurns: number; budget: Budget | null };
  request: RaiseRequest;
}

/**
 * Asks the fleet to take a run stopped at a limit up again with larger limits. Returns once the
 * request is committed; a worker claims the run and goes on. Throws RaiseRefusedError or
 * LimitNotRaisedError (nothing written), RangeError for a value outside its range.
 */
export async function raiseFleetRun(pool: Database, options: FleetRaiseOptions): Promise<FleetRaiseResult> {
  const { run } = options;
  const budget = checkBudget(options.budget);
  const maxTurns = checkMaxTurns(options.maxTurns);
  const by = options.by ?? 'api';
  if (typeof by !== 'string' || by.trim() === '') throw new RangeError('by must name who asks (a user name, a program); nothing was written.');
  if (maxTurns === undefined && budget === undefined) throw new RaiseRefusedError(run, 'nothing-given', null, 0);
  const store = openDatabaseStore(pool, run);
  if (await store.queued()) throw new RaiseRefusedError(run, 'not-stopped', null, 0);
  const loaded = await store.load({ fromLastSnapshot: true });
  const view = foldJournal(store.location, loaded);
  const context = snapshotContextOf(view);
  const pending = await pendingRaise(pool, run);
  if (pending) throw new RaiseRefusedError(run, 'already-raised', view.state, context.turn, pending);
  if (!isStoppedAtLimit(view.state)) throw new RaiseRefusedError(run, 'not-stopped', view.state, context.turn);
  const stoppedAt = stoppingLimit(view.state, context);
  checkRaise(run, context, stoppedAt, maxTurns, budget);
  const request: RaiseRequest = {
    kind: 'raise',
    by,
    at: Date.now(),
    ...(maxTurns !== undefined ? { maxTurns } : {}),
    ...(budget ? { budget } : {}),
  };
  await insertRaise(pool, run, loaded.records.at(-1)!.record.seq + 1, view.state, context.turn, request);
  return { run, state: view.state, turn: context.turn, stoppedAt, before: { maxTurns: context.maxTurns, budget: context.budget ?? null }, request };
}

/** The raise waiting for a worker, or null (also for a row that holds no whole raise). */
export async function pendingRaise(pool: Database, run: string): Promise<RaiseRequest | null> {
  const request = await readRaiseRequest(pool, run);
  return request !== undefined && raiseProblem(request) === null ? (request as RaiseRequest) : null;
}

/** Why a stored raise is not a whole one, or null. */
export function raiseProblem(value: unknown): string | null {
  const request = value as Partial<RaiseRequest> | null;
  if (request === null || typeof request !== 'object' || request.kind !== 'raise') return 'it holds no raise';
  if (typeof request.by !== 'string' || request.by.trim() === '' || typeof request.at !== 'number') return 'it does not say who asked and when';
  if (request.maxTurns !== undefined && !(Number.isSafeInteger(request.maxTurns) && request.maxTurns > 0)) return 'its maxTurns is not a number of turns';
  try {
    checkBudget(request.budget);
  } catch (error) {
    return (error as Error).message;
  }
  if (request.tenantQuota !== undefined && request.tenantQuota !== true) return 'its tenantQuota is not true';
  if (request.maxTurns === undefined && request.budget === undefined && request.tenantQuota === undefined) return 'it raises nothing';
  return null;
}

function checkMaxTurns(maxTurns: number | undefined): number | undefined {
  if (maxTurns === undefined) return undefined;
  if (!(Number.isSafeInteger(maxTurns) && maxTurns >= 1 && maxTurns <= MAX_TURNS_LIMIT)) {
    throw new RangeError(`maxTurns must be a whole number from 1 to ${MAX_TURNS_LIMIT} (got ${String(maxTurns)}); nothing was written.`);
  }
  return maxTurns;
}

function stoppingLimit(state: AgentStateName, context: AgentContext): LimitName {
  if (state === 'stoppedAtMaxTurns') return 'maxTurns';
  return context.budgetStop?.budget === 'cost' ? 'maxCostUsd' : 'maxTotalTokens';
}

function usedOf(limit: LimitName, context: AgentContext): number {
  if (limit === 'maxTurns') return context.turn;
  return limit === 'maxTotalTokens' ? totalTokens(context.usage) : (context.costUsd ?? 0);
}

function currentOf(limit: LimitName, context: AgentContext): number | null {
  if (limit === 'maxTurns') return context.maxTurns;
  return context.budget?.[limit] ?? null;
}

/**
 * Every limit given must be one the run has, and above it; the limit the run stopped at must be
 * among them; and once applied, no limit may still be reached (the run would stop again at once).
 */
function checkRaise(run: string, context: AgentContext, stoppedAt: LimitName, maxTurns: number | undefined, budget: Budget | undefined): void {
  const given: Record<LimitName, number | undefined> = { maxTurns, maxTotalTokens: budget?.maxTotalTokens, maxCostUsd: budget?.maxCostUsd };
  const refuse = (limit: LimitName, value: number | null) =>
    new LimitNotRaisedError(run, limit, currentOf(limit, context), value, usedOf(limit, context), suggestionFor(limit, context));
  for (const limit of ['maxTurns', 'maxTotalTokens', 'maxCostUsd'] as const) {
    const value = given[limit];
    if (value === undefined) continue;
    const current = currentOf(limit, context);
    if (current === null || value <= current) throw refuse(limit, value);
  }
  if (given[stoppedAt] === undefined) throw refuse(stoppedAt, null);
  // What is used may be past the limit (a reply's tokens overshoot it): a raise short of it would stop again at once.
  for (const limit of ['maxTurns', 'maxTotalTokens', 'maxCostUsd'] as const) {
    const after = given[limit] ?? currentOf(limit, context);
    if (after === null) continue;
    if (usedOf(limit, context) >= after && (limit !== 'maxTurns' || stoppedAt === 'maxTurns')) throw refuse(limit, given[limit] ?? null);
  }
}

/** Twice the limit and above what is used, as the budget's own stop line suggests. */
function suggestionFor(limit: LimitName, context: AgentContext): string | null {
  const current = currentOf(limit, context);
  if (current === null) return null;
  const used = usedOf(limit, context);
  if (limit === 'maxTurns') return `--max-turns ${Math.min(MAX_TURNS_LIMIT, Math.max(current, used) + 10)}`;
  if (limit === 'maxTotalTokens') return `--max-total-tokens ${Math.max(current * 2, used + 1)}`;
  return `--max-cost-usd ${(Math.ceil(Math.max(current * 2, used * 1.5) * 100) / 100).toFixed(2)}`;
}

/**
 * The request, in one transaction that holds the run's row: still the records and state it was
 * worked out from (a run that moved on meanwhile is refused), and no raise there already.
 */
async function insertRaise(pool: Database, run: string, records: number, state: AgentStateName, turn: number, request: RaiseRequest): Promise<void> {
  const inserted = await insertRaiseRequest(pool, run, records, state, request);
  if (inserted.outcome === 'moved-on') throw new RaiseRefusedError(run, 'moved-on', inserted.state as AgentStateName | null, turn);
  // Read once the row is let go: the raise that was there first is what the refusal names.
  if (inserted.outcome === 'raised-already') throw new RaiseRefusedError(run, 'already-raised', state, turn, await pendingRaise(pool, run));
}
