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
