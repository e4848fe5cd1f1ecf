import { EXIT_CODE_OF_KIND } from '../util/durable-agent-error.ts';

/** The command line's exit codes (documented in the README); those an error ends with follow from its kind. */
export const EXIT = {
  done: 0,
  /** Something unexpected: a bug. */
  internal: EXIT_CODE_OF_KIND.internal,
  /** Refused: bad arguments, or a store that cannot be used as asked (missing, damaged, locked, another version, an unfinished run in the way). */
  refused: EXIT_CODE_OF_KIND.refused,
  /** The model could not be reached or answered with an error after retries; the run is intact and resumable. */
  modelFailed: EXIT_CODE_OF_KIND.model,
  /**
   * The environment is in the way: the store or a file the run needs could not be read or written
   * (permissions, a full disk, a file where a directory belongs). The run is intact up to the last save.
   */
  storeWriteFailed: EXIT_CODE_OF_KIND.store,
  /** The run reached MAX_TURNS; resume with a larger --max-turns to go on. */
  stoppedAtMaxTurns: 5,
  /** The run ended in the failed state (refusal, max_tokens, context window…); see the message. */
  runFailed: 6,
  /** The run waits for a person's decision (approval or answer); resume after giving it. */
  waitingForPerson: 7,
  /** The run was cancelled (durable-agent cancel): it ended in the final state cancelled. */
  cancelled: 9,
  /** A budget (--max-cost-usd, --max-total-tokens) was reached before a model call; resume with a larger one to go on. */
  budgetReached: 8,
  /** Interrupted by Ctrl-C or SIGTERM; resumable. */
  interrupted: EXIT_CODE_OF_KIND.stopped,
  /** A simulated crash (CRASH_AFTER). */
  simulatedCrash: 137,
} as const;
