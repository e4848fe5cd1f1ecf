/**
 * What an inbox refuses: a key that cannot be a file name, a second entry for a key, a file that
 * is not an entry this version wrote.
 */
import { DurableAgentError, type ErrorKind } from '../../util/durable-agent-error.ts';

/** A tool_use_id that cannot be a file name of the inbox. */
export class BadCallIdError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'BadCallIdError';
  constructor(readonly id: string) {
    super(
      `${JSON.stringify(id.length > 60 ? `${id.slice(0, 60)}…` : id)} is not a call id: a call id is a tool_use_id such as toolu_01A9… ` +
        '(letters, digits, "_" and "-" only), as `durable-agent pending` lists it. Nothing was written.',
    );
  }
}

/** The inbox already holds a decision for this call. */
export class DecisionExistsError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'DecisionExistsError';
  constructor(
    readonly tool_use_id: string,
    readonly file: string,
  ) {
    super(`A decision for ${tool_use_id} is already given (${file}); a call is decided once.`);
  }
}

/** An inbox file that is not a decision this version wrote: refused, never guessed at. */
export class InboxFileError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'InboxFileError';
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(
      `${file} is not a decision this durable-agent can read (${problem}). A decision is written whole, so this file was ` +
        'written or changed by something else: move it out of the directory and give the decision again (durable-agent pending lists what waits).',
    );
  }
}
