/** Refusals of the command line that are not about the words typed but about what they name. */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** A directory to read from does not exist: refused rather than created empty. */
export class NoSuchDirectoryError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'NoSuchDirectoryError';
  constructor(
    readonly option: string,
    readonly dir: string,
    /** Something else is there (a file). */
    readonly exists: boolean,
  ) {
    super(
      `${option} ${dir}: ${exists ? 'not a directory' : 'no such directory'}. ` +
        'Give the directory the run was started in (the --dir of demo or run); nothing was written.',
    );
  }
}
