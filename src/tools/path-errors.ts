/**
 * Why a file tool refused a path. Each is thrown from the tool, so the model reads the message as
 * an is_error tool_result and the run goes on.
 */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
export const STATE_DIR = '.durable-agent';

export class PathOutsideError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'PathOutsideError';
  constructor(
    readonly requested: string,
    /** The symbolic link (relative to the working directory) the path went through, if any. */
    readonly symlink: string | null = null,
    /** True when the path lands in the run's own state rather than outside the directory. */
    readonly inState = false,
  ) {
    const where = inState ? `into the working directory's ${STATE_DIR}/ state` : 'outside the working directory';
    const how = symlink === null ? '' : ` through the symbolic link "${symlink}"`;
    super(`"${requested}" leads ${where}${how}: use a path to a file of the working directory (or a symbolic link that stays inside it, not into ${STATE_DIR}/).`);
  }
}

export class NotAFileError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'NotAFileError';
  constructor(
    readonly requested: string,
    /** What the path names instead: "directory", "FIFO", "socket", "device". */
    readonly found: string,
  ) {
    super(
      found === 'directory'
        ? `"${requested}" is a directory, not a file: give the path of a file (use list_files to see what is in a directory).`
        : `"${requested}" is a ${found}, not a regular file: only regular files are read or written.`,
    );
  }
}

export class NotADirectoryError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'NotADirectoryError';
  constructor(
    readonly requested: string,
    /** The part of the path that is not a directory. */
    readonly component: string,
  ) {
    super(`"${requested}": "${component}" is a file, not a directory; list_files lists directories, and a file path cannot go through a file.`);
  }
}

export class PathNotFoundError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'PathNotFoundError';
  constructor(
    readonly requested: string,
    /** The first part of the path that does not exist. */
    readonly missing: string,
  ) {
    super(`"${requested}" does not exist${missing === requested ? '' : ` ("${missing}" is missing)`}: use list_files to see which files there are.`);
  }
}

/** Something changed the path while it was being opened (a symlink appeared): refused, not guessed. */
export class PathChangedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'PathChangedError';
  constructor(readonly requested: string) {
    super(`"${requested}" changed while it was being opened (a symbolic link appeared in its place): call the tool again.`);
  }
}
