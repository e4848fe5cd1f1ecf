/** Why a decision was refused before anything was written. */
export type DecisionRefusal = 'no-such-call' | 'not-waiting' | 'already-decided' | 'wrong-verdict' | 'invalid-input' | 'no-run';

/**
 * A decision that cannot be given: for a call that is not there or does not wait, a second one,
 * a verdict that does not fit what the call waits for, or edited input that fails the tool's
 * schema. Nothing was written; the message says what to do instead.
 */
export class DecisionRefusedError extends Error {
  override readonly name = 'DecisionRefusedError';
  constructor(
    readonly reason: DecisionRefusal,
    readonly tool_use_id: string,
    message: string,
  ) {
    super(message);
  }
}

/** A tool_use_id that cannot be a file name of the inbox. */
export class BadCallIdError extends Error {
  override readonly name = 'BadCallIdError';
  constructor(readonly id: string) {
    super(
      `${JSON.stringify(id.length > 60 ? `${id.slice(0, 60)}…` : id)} is not a call id: a call id is a tool_use_id such as toolu_01A9… ` +
        '(letters, digits, "_" and "-" only), as `durable-agent pending` lists it. Nothing was written.',
    );
  }
}

/** The inbox already holds a decision for this call. */
export class DecisionExistsError extends Error {
  override readonly name = 'DecisionExistsError';
  constructor(
    readonly tool_use_id: string,
    readonly file: string,
  ) {
    super(`A decision for ${tool_use_id} is already given (${file}); a call is decided once.`);
  }
}

/** An inbox file that is not a decision this version wrote: refused, never guessed at. */
export class InboxFileError extends Error {
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

/** A resume was given a looser rule than the one pinned when the run started. */
export class PolicyLoosenedError extends Error {
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
