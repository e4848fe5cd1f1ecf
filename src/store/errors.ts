/** Errors a store raises. Each names the store and says what the user can do next. */
import { JOURNAL_VERSIONS_READ } from './journal/journal-record.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** What the caller wanted of a run that is not there: to pick it up (resume) or to look at it. */
export type MissingRunAttempt = 'resume' | 'read';

export class StoreMissingError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'StoreMissingError';
  constructor(
    readonly location: string,
    readonly attempted: MissingRunAttempt = 'resume',
  ) {
    super(
      attempted === 'resume'
        ? `No run is stored at ${location} (there is no journal there). Start a run first: a resume needs one to pick up.`
        : `No run is stored at ${location}. Start one with \`durable-agent demo\` or \`durable-agent run\`.`,
    );
  }
}

/** "1, 2 or 3". */
function versionList(versions: readonly number[]): string {
  return versions.length < 2 ? versions.join('') : `${versions.slice(0, -1).join(', ')} or ${versions.at(-1)}`;
}

export class StoreVersionError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'StoreVersionError';
  constructor(
    readonly location: string,
    readonly foundVersion: unknown,
    readonly supportedVersion: number,
  ) {
    super(
      `The journal at ${location} has version ${String(foundVersion)}; this durable-agent reads version ${versionList(JOURNAL_VERSIONS_READ)} only, ` +
        `so it was not loaded and nothing was changed. Finish that run with the durable-agent release that wrote it, ` +
        `or start over with --fresh (the old journal is archived, not deleted).`,
    );
  }
}

/**
 * Where a journal is damaged, which decides what can be said about how it happened:
 * - `start`: the header or the commit mark;
 * - `inside`: a record before the last one;
 * - `last`: the last line is whole but is not a valid record;
 * - `cut-short`: records the commit mark counts are missing from the end;
 * - `lost-record`: exactly the last committed record is cut short (StoreLostRecordError);
 * - `rows-missing`: a database holds fewer records than the run counts.
 */
export type JournalDamage = 'start' | 'inside' | 'last' | 'cut-short' | 'lost-record' | 'rows-missing';

const HOW_IT_HAPPENED: Record<JournalDamage, string> = {
  start: 'A crash does not damage the header or the commit mark',
  inside: 'Damage before the last record is not what a crash leaves behind',
  last: 'A crash leaves at most a cut-off last line, not a whole line that is not a valid record',
  'cut-short': 'A crash can only cut off the record being written, so the file was cut short afterwards',
  'rows-missing': 'A record is committed together with the count, so no crash leaves one missing: rows were deleted afterwards',
  'lost-record': 'A killed process cannot remove a record the commit mark counts (the mark counts it only once it is written whole)',
};

export class StoreCorruptError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name: string = 'StoreCorruptError';
  constructor(
    readonly location: string,
    readonly line: number,
    readonly offset: number,
    readonly problem: string,
    readonly damage: JournalDamage = 'inside',
    advice = `Restore the file from a backup, or start over with --fresh (the damaged journal is archived, not deleted).`,
  ) {
    super(
      `The journal at ${location} is damaged at line ${line} (byte ${offset}): ${problem}. ` +
        `${HOW_IT_HAPPENED[damage]}, so the journal was not loaded and nothing was changed: ` +
        `a half-right state would be guessed otherwise. ${advice}`,
    );
  }
}

/**
 * The journal ends inside its last committed record. Refused like any damage, unless the person
 * resuming accepts the loss (acceptLostRecord / --accept-lost-record): the run then goes on from
 * the record before, and whatever the lost record had started may happen again.
 */
export class StoreLostRecordError extends StoreCorruptError {
  override readonly name = 'StoreLostRecordError';
  constructor(
    location: string,
    line: number,
    offset: number,
    /** The number of the record that is lost. */
    readonly record: number,
    /** What the record was, as far as its remaining bytes tell (e.g. "checkpoint A"), or null. */
    readonly what: string | null,
    readonly bytesLeft: number,
  ) {
    super(
      location,
      line,
      offset,
      `record ${record}${what ? ` (${what})` : ''} is counted by the commit mark but missing: only ${bytesLeft} of its bytes are left`,
      'lost-record',
      `Restore the file from a backup; or, to accept the loss, resume with --accept-lost-record (programmatic: ` +
        `acceptLostRecord: true) and the run goes on from record ${record - 1}. That is safe when a power loss did this ` +
        `(it can leave the mark on disk without the record it counts, and nothing is started before its record is on disk); ` +
        `if the file was cut afterwards, whatever record ${record} had started (a tool call, a closed turn) may happen again. ` +
        `Or start over with --fresh (the journal is archived, not deleted).`,
    );
  }
}

export class StoreWriteError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'store';
  override readonly name = 'StoreWriteError';
  constructor(
    readonly location: string,
    readonly what: string,
    override readonly cause: unknown,
    /**
     * Whether the store cannot tell if the write is durable: a failed fsync (the page cache may
     * have dropped what the process wrote) or a database connection lost mid-write. Only what
     * the store reads back from the disk is the truth then, and the run must start nothing more.
     */
    readonly outcomeUnknown = false,
  ) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      outcomeUnknown
        ? `Could not confirm that ${what} is saved in ${location}: ${reason}. The run stopped there and started nothing more; ` +
            'what the disk holds is what a resume reads. Fix the cause (the disk, the database), then resume the run.'
        : `Could not save ${what} to ${location}: ${reason}. Everything saved before it is intact. ` +
            `Fix the cause (free disk space, check permissions), then resume the run.`,
    );
  }
}

/**
 * The file system refused what the store needed: permissions, a full disk, a file where a
 * directory belongs. The environment, not the run, has to be fixed; nothing stored was changed.
 */
export class StoreAccessError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'store';
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

export class RunLockedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
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
export class RunLockLostError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
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

export class RunExistsError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
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

/**
 * A sealed run whose wrapped run key (run-key.json beside its journal) is gone: deleted on
 * purpose (prune --shred), its content can never be opened again. What finds and operates the
 * run (its state, turn, tools, usage) still reads; nothing of its content does.
 */
export class RunKeyMissingError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'RunKeyMissingError';
  constructor(
    readonly runId: string,
    /** The run key its content is sealed with. */
    readonly keyId: string,
    /** Where its wrapped key was kept. */
    readonly path: string,
  ) {
    super(
      `The content of run ${runId} is sealed with the run key ${keyId}, whose wrapped copy ${path} is gone (a shredded run), ` +
        'so it cannot be shown or resumed. Restore that file from a backup if the run was not meant to be shredded.',
    );
  }
}

/** A shred asked of a run that is not sealed: it has no run key to delete, and nothing was changed. */
export class RunNotSealedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'RunNotSealedError';
  constructor(
    readonly runId: string,
    readonly location: string,
  ) {
    super(`Run ${runId} in ${location} is not sealed (it was started without keys), so it has no run key to delete and nothing was changed. Remove the run itself to delete its content.`);
  }
}

/**
 * A plain run whose journal ends in a record a killed writer cut off was not sealed in: the cut
 * bytes are the run's (a resume keeps them aside, in plain), and a rewrite would have to drop or
 * keep them unsealed. Nothing was changed.
 */
export class CutJournalNotSealedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'CutJournalNotSealedError';
  constructor(
    readonly runId: string,
    readonly journal: string,
    readonly cutBytes: number,
  ) {
    super(
      `Run ${runId} was not sealed: its journal ${journal} ends in ${cutBytes} bytes of a record a killed writer cut off, and nothing was changed. ` +
        'Resume the run once with its command (it sets them aside), then run keys rotate --seal-plain again.',
    );
  }
}
