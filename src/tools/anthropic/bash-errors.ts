/** Why a bash command gave no result: thrown from the tool, so the model reads it as an is_error tool_result. */
import { DurableAgentError, type ErrorKind } from '../../util/durable-agent-error.ts';

export class BashTimeoutError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'BashTimeoutError';
  constructor(
    readonly command: string,
    readonly timeoutMs: number,
    /** What it had written before it was killed. */
    readonly output: string,
  ) {
    super(
      `The command did not finish within ${timeoutMs} ms and was killed (with every process it started). ` +
        'It may have changed things before that: check before running it again; run long work in the background with its output to a file.' +
        (output ? `\nIts output so far:\n${output}` : ''),
    );
  }
}
