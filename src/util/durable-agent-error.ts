/**
 * The one base of every error the package throws. Its `kind` says what a caller can do about it,
 * and the command line's exit code follows from it, so a new error needs no list kept elsewhere.
 */

/**
 * refused: the request cannot be carried out as asked (bad input, a store in the way), and
 * nothing was written for it. model: the model could not be reached or answered with an error;
 * the run is intact. store: the store or a file could not be read or written (permissions, a full
 * disk): the run is intact up to its last save. stopped: the run stopped between two steps
 * (paused, interrupted, a lost lease, a simulated crash) and a resume goes on. tool: a tool
 * failed; its outcome is an error result the model reads, and the run goes on. internal: a part of
 * the runtime met what it should not have (a bug).
 */
export const ERROR_KINDS = ['refused', 'model', 'store', 'stopped', 'tool', 'internal'] as const;

export type ErrorKind = (typeof ERROR_KINDS)[number];

/** The command line's exit code for each kind (the README's table of exit codes). */
export const EXIT_CODE_OF_KIND: Readonly<Record<ErrorKind, number>> = {
  refused: 2,
  model: 3,
  store: 4,
  stopped: 130,
  tool: 1,
  internal: 1,
};

export class DurableAgentError extends Error {
  /** What kind of error each class is: declared by every class that extends this one. */
  declare static readonly kind: ErrorKind;

  get kind(): ErrorKind {
    return (this.constructor as typeof DurableAgentError).kind ?? 'internal';
  }

  /** The exit code the command line ends with when this error ends a command. */
  get exitCode(): number {
    return EXIT_CODE_OF_KIND[this.kind];
  }
}

/** An optional peer dependency that a feature asked for is not installed; nothing was run. */
export class OptionalDependencyMissingError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name: string = 'OptionalDependencyMissingError';
  constructor(
    /** The package to install. */
    readonly packageName: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
