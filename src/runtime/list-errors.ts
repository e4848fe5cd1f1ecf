/** The error of a list's page. */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** A page was asked for after a run the list does not hold (pruned, archived, or never there). */
export class ListCursorError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ListCursorError';
  constructor(readonly after: string) {
    super(`No run ${after} is in the list, so the page after it cannot be found: give --after the id of the last run a page printed (a run pruned since has no place), or list from the start without --after.`);
  }
}
