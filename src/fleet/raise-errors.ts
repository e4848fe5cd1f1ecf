/**
 * What a raise of a fleet run's limits is (the request a worker takes the run up with), and the
 * refusals of one that cannot be: the errors in a module of their own, so that durable-agent/errors
 * loads them without the PostgreSQL store.
 */
import { type AgentStateName, type Budget, isFinishedState } from '../../machines/agent-loop.types.ts';
import { formatUsd } from '../budget/budget-words.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** What waits in da_controls for the worker that takes the run up. */
export interface RaiseRequest {
  kind: 'raise';
  by: string;
  /** Epoch milliseconds when it was asked. */
  at: number;
  maxTurns?: number | undefined;
  budget?: Budget | undefined;
  /** The run's tenant's quota was set (raised or taken away) or a new month began: lift the run's stop at it. */
  tenantQuota?: true | undefined;
}

/** Which limit a run stopped at, with what it has used of it. */
export type LimitName = 'maxTurns' | 'maxTotalTokens' | 'maxCostUsd';

/** A raise in words: `--max-total-tokens 5000 by ana at …`. */
export function raiseWords(request: RaiseRequest): string {
  const flags = [
    ...(request.maxTurns !== undefined ? [`--max-turns ${request.maxTurns}`] : []),
    ...(request.budget?.maxTotalTokens !== undefined ? [`--max-total-tokens ${request.budget.maxTotalTokens}`] : []),
    ...(request.budget?.maxCostUsd !== undefined ? [`--max-cost-usd ${request.budget.maxCostUsd}`] : []),
    ...(request.tenantQuota ? ['its tenant\'s quota set again'] : []),
  ];
  return `${flags.join(' ')} by ${request.by} at ${new Date(request.at).toISOString()}`;
}

export type RaiseProblem = 'nothing-given' | 'not-stopped' | 'already-raised' | 'moved-on';

/** A raise the run cannot take as asked (not stopped at a limit, or a raise already waits); nothing was written. */
export class RaiseRefusedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'RaiseRefusedError';
  constructor(
    readonly run: string,
    readonly problem: RaiseProblem,
    /** Where the run stands (null: it has no journal yet). */
    readonly state: AgentStateName | null,
    readonly turn: number,
    /** The raise already waiting (problem 'already-raised'). */
    readonly pending: RaiseRequest | null = null,
  ) {
    super(raiseRefusal(run, problem, state, turn, pending));
  }
}

/** A limit that is not a raise: not larger than the run's own, one the run does not have, or one left where it stopped the run. Nothing was written. */
export class LimitNotRaisedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'LimitNotRaisedError';
  constructor(
    readonly run: string,
    readonly limit: LimitName,
    /** The run's limit now (null: the run has none of this kind). */
    readonly current: number | null,
    /** What was asked (null: not given, though the run stopped at this limit). */
    readonly given: number | null,
    /** What the run has used against it: turns taken, tokens, US dollars. */
    readonly used: number,
    /** A flag and value that would go on, e.g. `--max-total-tokens 2468`; null where none would. */
    readonly suggestion: string | null,
  ) {
    super(limitRefusal(run, limit, current, given, used, suggestion));
  }
}

function raiseRefusal(run: string, problem: RaiseProblem, state: AgentStateName | null, turn: number, pending: RaiseRequest | null): string {
  const nothing = 'Nothing was written.';
  switch (problem) {
    case 'nothing-given':
      return `A raise of fleet run ${run} needs a larger limit: --max-turns N, --max-total-tokens N or --max-cost-usd USD (maxTurns, budget). ${nothing}`;
    case 'already-raised':
      return (
        `Fleet run ${run} was raised already (${pending ? raiseWords(pending) : 'a raise is waiting'}) and waits for a worker to take it up: ` +
        `raise it again once it stops (status --database-url shows where it stands). ${nothing}`
      );
    case 'moved-on':
      return `Fleet run ${run} moved on while the raise was asked (now ${state ?? 'gone'}): look at status --database-url and ask again if it still stops at a limit. ${nothing}`;
    case 'not-stopped':
      return `Fleet run ${run} is not stopped at a limit: ${notStoppedWords(state, turn)} A raise gives more to a run stopped at its MAX_TURNS or its budget. ${nothing}`;
  }
}

function notStoppedWords(state: AgentStateName | null, turn: number): string {
  if (state === null) return 'no worker has started it yet; its spec keeps the limits it was submitted with.';
  if (state === 'cancelled') return `it was cancelled (turn ${turn}); fork it to try again from one of its steps (fork --run ID).`;
  if (isFinishedState(state)) return `it is finished (${state}, turn ${turn}); fork it to try again from one of its steps (fork --run ID).`;
  if (state === 'awaitingDecision') return `it waits for a person (turn ${turn}): approve, deny or answer --run ID lets it go on.`;
  return `it is unfinished (${state}, turn ${turn}) and a worker goes on with it as it is.`;
}

function limitRefusal(run: string, limit: LimitName, current: number | null, given: number | null, used: number, suggestion: string | null): string {
  const flag = FLAGS[limit];
  const nothing = 'Nothing was written.';
  const try_ = suggestion ? ` Give a larger one, e.g. durable-agent raise --run ${run} ${suggestion}.` : '';
  if (current === null) return `Fleet run ${run} has no ${WHAT[limit]}: a raise only raises a limit the run has (it stopped at another). ${nothing}`;
  const now = `Fleet run ${run} has a ${WHAT[limit]} of ${amount(limit, current)} (${flag}), ${amount(limit, used)} used`;
  if (given === null) return `${now}, and stopped there: a raise must give that limit more (${flag}).${try_} ${nothing}`;
  if (given <= current) return `${now}: ${flag} ${amount(limit, given)} is not larger.${try_} ${nothing}`;
  return `${now}: ${flag} ${amount(limit, given)} would still be reached, and the run would stop again at once.${try_} ${nothing}`;
}

const FLAGS: Record<LimitName, string> = { maxTurns: '--max-turns', maxTotalTokens: '--max-total-tokens', maxCostUsd: '--max-cost-usd' };
const WHAT: Record<LimitName, string> = { maxTurns: 'turn limit', maxTotalTokens: 'token budget', maxCostUsd: 'cost budget' };

function amount(limit: LimitName, n: number): string {
  if (limit === 'maxTurns') return `${n} ${n === 1 ? 'turn' : 'turns'}`;
  return limit === 'maxTotalTokens' ? `${n.toLocaleString('en-US')} tokens` : formatUsd(n);
}
