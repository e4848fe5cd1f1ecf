/**
 * Errors of sealed content and of the keys that open it. None of them ever carries key material
 * or the plaintext of a value: only key ids, the place of a value, a file's path and mode.
 */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/**
 * A sealed value (or a wrapped run key) failed its authentication check: it was damaged,
 * truncated, moved from another run or field, or the key given under its id is not the one it was
 * sealed with. Nothing of it was decoded.
 */
export class SealedValueError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'SealedValueError';
  constructor(
    /** Where the value sits: a record field (`message/3/0/text`), or `run key` for a wrapped key. */
    readonly field: string,
    /** The run it belongs to, when known. */
    readonly runId: string | null,
    /** The key id the value names (null when it could not be read). */
    readonly keyId: string | null,
    /** What is wrong, in words (never the value). */
    readonly problem: string,
    /** The journal record it was read from, when known. */
    readonly seq: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(
      `The sealed ${field}${runId === null ? '' : ` of run ${runId}`}${seq === null ? '' : ` (record ${seq})`} was refused: ${problem}. ` +
        'Nothing of it was decoded. It was damaged, cut short or moved from another run or field, or the key given' +
        `${keyId === null ? '' : ` as ${keyId}`} is not the one it was sealed with: check the key, or restore the run from a backup.`,
      options,
    );
  }
}

/** What a missing key was needed for: a run's data key (the value names it) or a master key (its wrap names it). */
export type KeyRole = 'run key' | 'master key';

/** A value or a run key is sealed under a key that was not given: nothing is shown for it, not even a guess. */
export class KeyNotGivenError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'KeyNotGivenError';
  constructor(
    /** The id of the key it needs. */
    readonly keyId: string,
    readonly role: KeyRole,
    /** The run it belongs to, when known. */
    readonly runId: string | null = null,
  ) {
    super(
      role === 'master key'
        ? `This content${runId === null ? '' : ` of run ${runId}`} needs the master key "${keyId}", which was not given. ` +
            `Add it to DURABLE_AGENT_KEYS or the key file (as ${keyId}:BASE64), or give the keys hook that holds it.`
        : `This content${runId === null ? '' : ` of run ${runId}`} is sealed with the run key "${keyId}", which was not given: ` +
            'open the run with the master key that wraps it.',
    );
  }
}

/** A list of keys (DURABLE_AGENT_KEYS, a key file) cannot be read as `ID:BASE64` entries. */
export class KeyListError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'KeyListError';
  constructor(
    /** Where the list came from: `DURABLE_AGENT_KEYS` or `the key file PATH`. */
    readonly source: string,
    /** What is wrong, naming the entry by its place or its id, never by its key. */
    readonly problem: string,
  ) {
    super(
      `The keys in ${source} were not used: ${problem}. Write each key as ID:BASE64 (an id of 1 to 32 letters, digits, - or _, ` +
        'and 32 random bytes in base64: `openssl rand -base64 32`), the key that seals first.',
    );
  }
}

/** A key file that others than its owner can read: refused before its keys are read. */
export class KeyFileTooOpenError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'KeyFileTooOpenError';
  constructor(
    readonly path: string,
    /** The file's permission bits, e.g. 0o644. */
    readonly mode: number,
  ) {
    super(
      `The key file ${path} has mode ${formatMode(mode)}: its group or others can read or change it, so its keys were not used. ` +
        `Make it readable by its owner alone: chmod 600 ${path}`,
    );
  }
}

/** A key file that cannot be read (missing, a folder, no permission). */
export class KeyFileUnreadableError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'KeyFileUnreadableError';
  constructor(
    readonly path: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`The key file ${path} could not be read (${reason}). Give the path of a file that holds ID:BASE64 lines, readable by its owner alone.`, options);
  }
}

/** A program's keys hook failed, or gave back what is not a key. Its own error is the cause. */
export class KeyHookError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'KeyHookError';
  constructor(
    /** What was asked of it. */
    readonly operation: 'seal' | 'open',
    /** The master key id involved, when known. */
    readonly keyId: string | null,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(
      `The keys hook could not ${operation} a run key${keyId === null ? '' : ` with the master key "${keyId}"`}: ${problem}. ` +
        'Nothing was sealed or shown with it; check the hook (its error is the cause of this one).',
      options,
    );
  }
}

/** Keys were given for a run kept where content is not sealed yet (a store without sealing): nothing was started. */
export class SealingUnsupportedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'SealingUnsupportedError';
  constructor(readonly location: string) {
    super(`Keys were given, but the store at ${location} does not seal runs, so nothing was started or resumed: keep the run in a folder (a file store), or leave the keys out.`);
  }
}

/** `0o644` as `0644`, the way chmod takes it. */
export function formatMode(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, '0')}`;
}
