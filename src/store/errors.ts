/** Errors a store raises. Each names the store and says what the user can do next. */

export class StoreMissingError extends Error {
  override readonly name = 'StoreMissingError';
  constructor(readonly location: string) {
    super(`No run is stored at ${location} (there is no journal there). Start a run first: a resume needs one to pick up.`);
  }
}

export class StoreVersionError extends Error {
  override readonly name = 'StoreVersionError';
  constructor(
    readonly location: string,
    readonly foundVersion: unknown,
    readonly supportedVersion: number,
  ) {
    super(
      `The journal at ${location} has version ${String(foundVersion)}; this durable-agent reads version ${supportedVersion} only, ` +
        `so it was not loaded and nothing was changed. Finish that run with the durable-agent release that wrote it, ` +
        `or start over with --fresh (the old journal is archived, not deleted).`,
    );
  }
}

export class StoreCorruptError extends Error {
  override readonly name = 'StoreCorruptError';
  constructor(
    readonly location: string,
    readonly line: number,
    readonly offset: number,
    readonly problem: string,
  ) {
    super(
      `The journal at ${location} is damaged at line ${line} (byte ${offset}): ${problem}. ` +
        `Damage before the last record is not what a crash leaves behind, so the journal was not loaded and nothing was changed: ` +
        `a half-right state would be guessed otherwise. Restore the file from a backup, or start over with --fresh ` +
        `(the damaged journal is archived, not deleted).`,
    );
  }
}

export class StoreWriteError extends Error {
  override readonly name = 'StoreWriteError';
  constructor(
    readonly location: string,
    readonly what: string,
    override readonly cause: unknown,
  ) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      `Could not save ${what} to ${location}: ${reason}. Everything saved before it is intact. ` +
        `Fix the cause (free disk space, check permissions), then resume the run.`,
    );
  }
}

/**
 * The file system refused what the store needed: permissions, a full disk, a file where a
 * directory belongs. The environment, not the run, has to be fixed; nothing stored was changed.
 */
export class StoreAccessError extends Error {
  override readonly name = 'StoreAccessError';
  constructor(
    /** The path the system refused, or the one in the way. */
    readonly path: string,
    /** What was being done, e.g. "read the journal". */
    readonly action: string,
    /** The errno code, e.g. EACCES. */
    readonly code: string,
    /** What is wrong and how to fix it, in words. */
    readonly problem: string,
    override readonly cause: unknown,
  ) {
    super(`Could not ${action}: ${problem}. Nothing stored was changed: fix that, then run the command again.`);
  }
}

export class RunLockedError extends Error {
  override readonly name = 'RunLockedError';
  constructor(
    readonly location: string,
    readonly holder: string,
    /** How to proceed; by default, wait for the holder. */
    readonly advice = 'Wait for it to finish or stop it; a holder that has died is taken over automatically.',
  ) {
    super(`The run at ${location} is being driven by another process (${holder}). ${advice}`);
  }
}

/** Another process took this run's lock over: this one stops before writing or running anything more. */
export class RunLockLostError extends Error {
  override readonly name = 'RunLockLostError';
  constructor(
    readonly location: string,
    /** Why the lock is no longer this process's (who holds it now). */
    readonly why: string,
  ) {
    super(
      `This process no longer holds the run at ${location}: ${why}. It stopped before writing or running anything more; ` +
        `the process that holds the lock now goes on with the run (durable-agent status shows where it stands).`,
    );
  }
}

export class RunExistsError extends Error {
  override readonly name = 'RunExistsError';
  constructor(
    readonly location: string,
    readonly state: string,
    readonly turn: number,
  ) {
    super(
      `An unfinished run is already stored at ${location} (state ${state}, turn ${turn}). ` +
        `Resume it with --resume, or discard it with --fresh (it is archived, not deleted).`,
    );
  }
}
