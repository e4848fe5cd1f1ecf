/**
 * Who may touch a run's state folder. Its files are the run's journal and the inboxes a person's
 * decision or a cancel arrives through: a user who could write there could forge either, and
 * the journal holds the conversation. So the folder is made 0700 and its files 0600 (whatever
 * the umask), and a folder that every user may write to is refused before anything is read.
 */
import fs from 'node:fs';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;

/** The state folder may be written by every user of the machine. */
export class StateFolderOpenError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'StateFolderOpenError';
  constructor(
    readonly dir: string,
    readonly mode: number,
  ) {
    super(
      `${dir} can be written by every user of this machine (mode ${mode.toString(8).padStart(4, '0')}): anyone could forge a decision or a cancel there. ` +
        `Nothing was read. Make it private (chmod 700 ${dir}), then run the command again.`,
    );
  }
}

/** Throws StateFolderOpenError when `dir` is writable by others (and not sticky); a missing folder is the caller's to report. */
export function checkStateFolder(dir: string): void {
  const stat = fs.statSync(dir, { throwIfNoEntry: false });
  if (!stat) return;
  const mode = stat.mode & 0o7777;
  if (mode & 0o002 && !(mode & 0o1000)) throw new StateFolderOpenError(dir, mode);
}
