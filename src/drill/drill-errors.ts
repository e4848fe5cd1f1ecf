/** The drill's refusals and its failure, apart so that durable-agent/errors loads no runtime. */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** One call the drill followed, as far as an error needs it. */
export interface TwiceCall {
  tool: string;
  callId: string;
  effects: number;
}

/** The path cannot be drilled as given: it does not end, or it is not the same path twice. */
export class DrillPathError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'DrillPathError';
  constructor(readonly problem: string) {
    super(`The drill cannot play this path: ${problem}. Nothing was reported.`);
  }
}

/** A tool of the user's failed the drill: kind 'tool' (exit 1), as the drill command exits. */
export class SideEffectTwiceError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'SideEffectTwiceError';
  constructor(
    readonly point: string,
    readonly calls: readonly TwiceCall[],
  ) {
    super(
      `Killed at ${point} and resumed, ${calls.map((call) => `${call.tool} (${call.callId}) happened ${call.effects} times`).join(', ')}. ` +
        'Hand ctx.idempotencyKey to the outside world so that a second call is refused there, and give the tool a verify() (or drop idempotent: true if it is not).',
    );
  }
}

