/** Why a decision was refused before anything was written. */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
export type DecisionRefusal = 'no-such-call' | 'not-waiting' | 'already-decided' | 'wrong-verdict' | 'invalid-input' | 'no-run';

/**
 * A decision that cannot be given: for a call that is not there or does not wait, a second one,
 * a verdict that does not fit what the call waits for, or edited input that fails the tool's
 * schema. Nothing was written; the message says what to do instead.
 */
export class DecisionRefusedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'DecisionRefusedError';
  constructor(
    readonly reason: DecisionRefusal,
    readonly tool_use_id: string,
    message: string,
  ) {
    super(message);
  }
}




/** A resume was given a looser rule than the one pinned when the run started. */
export class PolicyLoosenedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'PolicyLoosenedError';
  constructor(
    readonly location: string,
    readonly difference: string,
  ) {
    super(
      `The run at ${location} was started with a stricter rule for decisions: ${difference}. It was not resumed and nothing ` +
        'was changed. Resume it without that flag (the rule it started with applies), or, to loosen the rule on purpose, add ' +
        '--replace-decision-policy (programmatic: replaceDecisionPolicy: true): the flags given then replace the rule, for this resume.',
    );
  }
}
