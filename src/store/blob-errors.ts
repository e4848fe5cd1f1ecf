/** A journal record refers to a blob (a tool result's image or document) that is not there as written. */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** missing: no file by its name; corrupt: its bytes are not the ones named; malformed: the reference itself cannot be read. */
export type BlobProblem = 'missing' | 'corrupt' | 'malformed';

export class StoreBlobError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'StoreBlobError';
  constructor(
    /** The journal that refers to it. */
    readonly location: string,
    /** The record that refers to it. */
    readonly seq: number,
    /** The blob's path. */
    readonly blob: string,
    readonly problem: BlobProblem,
    /** What was found, in words: "there is no file by that name", "it holds 812 bytes, not 1000000". */
    readonly found: string,
  ) {
    super(
      `The journal at ${location} refers, in record ${seq}, to the blob ${blob} (a tool result's image or document), but ${found}. ` +
        'A blob is written and synced before any record refers to it, so it was removed or changed afterwards: the run was not loaded, ' +
        'nothing was changed and nothing of the conversation was dropped. Put the blob back from a backup (a sha256- name is the SHA-256 of its bytes: ' +
        '`sha256sum` checks a copy; an hmac- one is a sealed run\'s, checked with its key), or start over with --fresh (the journal is archived, not deleted).',
    );
  }
}
