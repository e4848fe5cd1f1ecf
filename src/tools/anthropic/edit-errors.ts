/**
 * Why a command of the text editor or the memory tool did nothing. Each is thrown from the
 * tool, so the model reads the message as an is_error tool_result and can act on it: the
 * messages say what to send instead, in the words of Anthropic's text editor and memory docs.
 */
import { DurableAgentError, type ErrorKind } from '../../util/durable-agent-error.ts';

export class OldTextNotFoundError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'OldTextNotFoundError';
  constructor(readonly path: string) {
    super(`No replacement was performed: old_str did not appear verbatim in ${path}. View the file and copy the text exactly, whitespace and indentation included.`);
  }
}

export class OldTextNotUniqueError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'OldTextNotUniqueError';
  constructor(
    readonly path: string,
    /** The lines (1-based) where the matches start. */
    readonly lines: readonly number[],
  ) {
    super(
      `No replacement was performed: old_str appears ${lines.length} times in ${path} (at lines ${lines.join(', ')}). ` +
        'Include more of the surrounding text in old_str so that it matches exactly one place.',
    );
  }
}

export class EmptyOldTextError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'EmptyOldTextError';
  constructor(readonly path: string) {
    super(`No replacement was performed in ${path}: old_str is empty. Give the exact text to replace; to add text, use insert.`);
  }
}

export class FileExistsError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'FileExistsError';
  constructor(readonly path: string) {
    super(`${path} already exists: create makes new files only and did not overwrite it. Change it with str_replace or insert (view it first).`);
  }
}

export class InsertLineError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'InsertLineError';
  constructor(
    readonly path: string,
    readonly insertLine: number,
    /** How many lines the file has. */
    readonly lineCount: number,
  ) {
    super(`Invalid insert_line ${insertLine}: ${path} has ${lineCount} lines, so insert_line must be from 0 (before the first line) to ${lineCount} (after the last).`);
  }
}

export class ViewRangeError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'ViewRangeError';
  constructor(
    readonly path: string,
    readonly range: readonly number[],
    readonly lineCount: number,
  ) {
    super(
      `Invalid view_range [${range.join(', ')}] for ${path}, which has ${lineCount} lines: give [start, end] with 1 ≤ start ≤ ${Math.max(lineCount, 1)} ` +
        'and end ≥ start, or end -1 for the rest of the file.',
    );
  }
}

export class FileTooLargeError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'FileTooLargeError';
  constructor(
    readonly path: string,
    readonly limitBytes: number,
  ) {
    super(`${path} is larger than ${limitBytes} bytes: it is not viewed or edited whole by this tool. View a part of it with view_range, or split it.`);
  }
}

/** A memory path that does not start with /memories. */
export class MemoryPathError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'MemoryPathError';
  constructor(readonly requested: string) {
    super(`The path ${requested} is not in the memory directory: every memory path starts with /memories (e.g. /memories/notes.md).`);
  }
}

/** delete or rename of /memories itself. */
export class MemoryRootError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'MemoryRootError';
  constructor(readonly command: 'delete' | 'rename') {
    super(`Cannot ${command} the /memories directory itself: name a file or directory inside it.`);
  }
}

export class DestinationExistsError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'DestinationExistsError';
  constructor(readonly path: string) {
    super(`The destination ${path} already exists: rename does not overwrite. Choose another new_path, or delete ${path} first.`);
  }
}
