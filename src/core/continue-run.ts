/**
 * Continuing a finished conversation: a `done` run takes a new user message and asks the model
 * again. The machine's REOPEN appends the message; its record is written with the disk
 * flushed before the model is called: a crash after it resumes a run that is no longer done
 * and asks with the message once; a crash before it leaves the run done, message never sent.
 */
import { isContinuingMessage } from '../../machines/agent-loop.logic.ts';
import type { AgentContext, AgentStateName } from '../../machines/agent-loop.types.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

export type ContinueProblem = 'empty' | 'not-done' | 'no-turns-left';

/** A message that cannot continue this run; nothing was written. */
export class ContinueRefusedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ContinueRefusedError';
  constructor(
    readonly location: string,
    readonly problem: ContinueProblem,
    readonly state: AgentStateName | null,
    readonly turn: number,
    readonly maxTurns: number,
  ) {
    super(continueAdvice(location, problem, state, turn, maxTurns));
  }
}

function continueAdvice(location: string, problem: ContinueProblem, state: AgentStateName | null, turn: number, maxTurns: number): string {
  switch (problem) {
    case 'empty':
      return 'The message is empty: give the text the model should answer (--message "TEXT"). Nothing was written.';
    case 'not-done':
      return (
        `The run in ${location} is ${state === 'awaitingDecision' ? 'waiting for a person' : describeState(state)}, not done: only a finished ` +
        'conversation takes a new message. Resume it without --message to let it finish (or decide the waiting call), then continue it. Nothing was written.'
      );
    case 'no-turns-left':
      return (
        `The run in ${location} has taken ${turn} of its ${maxTurns} turns: a new message would have none left to use tools. ` +
        `Give --max-turns N (more than ${turn}) with it. Nothing was written.`
      );
  }
}

function describeState(state: AgentStateName | null): string {
  switch (state) {
    case 'failed':
      return 'failed';
    case 'stoppedAtMaxTurns':
      return 'stopped at its MAX_TURNS';
    default:
      return `unfinished (${state ?? 'unknown'})`;
  }
}

/**
 * Throws ContinueRefusedError unless `message` can continue a run standing in `state`. The turn
 * limit stays the run's total (as on every resume): a new message gets the turns left, or the
 * larger total given now.
 */
export function checkContinue(location: string, message: string, state: AgentStateName, context: AgentContext, maxTurns: number | undefined): void {
  const limit = maxTurns ?? context.maxTurns;
  checkMessageText(location, message);
  if (state !== 'done') throw new ContinueRefusedError(location, 'not-done', state, context.turn, limit);
  if (limit <= context.turn) throw new ContinueRefusedError(location, 'no-turns-left', state, context.turn, limit);
}

/** An empty message is refused before the run is even read. */
export function checkMessageText(location: string, message: string): void {
  if (!isContinuingMessage(message)) throw new ContinueRefusedError(location, 'empty', null, 0, 0);
}
