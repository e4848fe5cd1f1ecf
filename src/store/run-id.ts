/**
 * A run's id, as a caller chooses it ('order-42') or as a run is given one: a name that is safe
 * as a folder name and a database key alike, so that no id can reach outside its store.
 */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export class RunIdError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'RunIdError';
  constructor(readonly runId: string) {
    super(
      `"${shown(runId)}" is not a run id: give 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit ` +
        '(no "/", no "..", no spaces or control characters), e.g. order-42. Nothing was written.',
    );
  }
}

/** A start given one run id for a store opened under another. */
export class RunIdMismatchError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'RunIdMismatchError';
  constructor(
    readonly runId: string,
    readonly storeRunId: string,
    readonly location: string,
  ) {
    super(`runId "${runId}" is not the id the store ${location} was opened for ("${storeRunId}"): give one of them (FileRuns.store(id) already names the run). Nothing was written.`);
  }
}

/**
 * A start under one id on a store that holds a run of another id its user gave (a folder of one
 * run, FileStore(dir)): clearing it would lose that run's id, and a later start of it would run
 * its effects again. Only a run whose id was made at random is cleared by a start as before.
 */
export class StoreHoldsOtherRunError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'StoreHoldsOtherRunError';
  constructor(
    readonly runId: string,
    readonly storedRunId: string,
    readonly location: string,
  ) {
    super(
      `The store ${location} holds the run "${storedRunId}", started under that id: starting "${runId}" there would archive it, ` +
        `and a later start of "${storedRunId}" would run it again. Nothing was written. Keep runs by id in a folder of runs, ` +
        `each in its own folder (new FileRuns(dir).store("${runId}"); on the command line, --run ${runId}), ` +
        `or give ifExists: "new" to archive "${storedRunId}" and start "${runId}" here on purpose.`,
    );
  }
}

/** What randomUUID() makes: the id of a run started without one. */
const RANDOM_RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * Whether a stored run's id was given by its user rather than made at random. Journals written
 * before the header said so tell by the id's shape: a random id is a UUID, and run ids came after.
 */
export function runIdWasGiven(header: { runId?: unknown; runIdGiven?: true | undefined }): boolean {
  if (header.runIdGiven === true) return true;
  return typeof header.runId === 'string' && !RANDOM_RUN_ID.test(header.runId);
}

/** The id itself, or RunIdError before anything is read or written. */
export function checkRunId(runId: unknown): string {
  if (typeof runId !== 'string' || !RUN_ID.test(runId) || runId.includes('..')) throw new RunIdError(String(runId));
  return runId;
}

function shown(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces
  const printable = text.replace(/[\u0000-\u001f\u007f]/g, '?');
  return printable.length > 60 ? `${printable.slice(0, 40)}… (${printable.length} characters)` : printable;
}
