/**
 * Where a folder's runs are kept, for a program and every command alike: the runs of a folder
 * DIR are in its state folder DIR/.durable-agent (DIR's own run there, its runs by id in
 * DIR/.durable-agent/runs/<id>/), so `new FileRuns(DIR)` writes where `--dir DIR` reads.
 *
 * Two folders are their own state folder: one named .durable-agent, and one that already holds
 * runs the way a state folder holds them (a journal, runs/<id>/ with a journal, archived
 * journals) and no .durable-agent/ — a program that named its state folder itself kept its runs
 * so. Those runs are read and resumed where they are: a second state folder made inside would
 * start a run of the same id again beside the one that ran.
 */
import fs from 'node:fs';
import path from 'node:path';
import { openRegularFile } from '../util/regular-file.ts';
import { JOURNAL_FORMAT } from './journal/journal-record.ts';

export const STATE_DIR = '.durable-agent';

const JOURNAL = 'journal.jsonl';
const RUNS = 'runs';
const ARCHIVE = 'archive';
const ARCHIVED_JOURNAL = /^journal-.*\.jsonl$/;
/** A journal's first line names its format within its first bytes (after the checksum). */
const HEADER_BYTES = 256;

/** The state folder of the folder `dir`: dir/.durable-agent, or `dir` itself when it is one (see above). */
export function stateFolderOf(dir: string): string {
  if (path.basename(path.resolve(dir)) === STATE_DIR) return dir;
  const inside = path.join(dir, STATE_DIR);
  if (isDirectory(inside) || !holdsRuns(dir)) return inside;
  return dir;
}

/** The folder to name (`--dir`, `new FileRuns(…)`) to reach the runs of a state folder. */
export function folderOfState(stateFolder: string): string {
  return path.basename(path.resolve(stateFolder)) === STATE_DIR ? path.dirname(stateFolder) : stateFolder;
}

/** Whether `dir` holds runs as a state folder holds them: its own journal, a run by id, or an archived journal. */
export function holdsRuns(dir: string): boolean {
  if (holdsRun(dir)) return true;
  const byId = path.join(dir, RUNS);
  return namesIn(byId).some((name) => holdsRun(path.join(byId, name)));
}

/** A run folder: a journal of ours, or an archived one. */
function holdsRun(dir: string): boolean {
  return isJournal(path.join(dir, JOURNAL)) || namesIn(path.join(dir, ARCHIVE)).some((name) => ARCHIVED_JOURNAL.test(name));
}

/** A file of that name could be a program's own: it is a journal when its header says so. */
function isJournal(file: string): boolean {
  let fd: number;
  try {
    fd = openRegularFile(file, 'a journal');
  } catch {
    return false;
  }
  try {
    const head = Buffer.alloc(HEADER_BYTES);
    const read = fs.readSync(fd, head, 0, HEADER_BYTES, 0);
    return head.subarray(0, read).toString('utf8').includes(`"format":${JSON.stringify(JOURNAL_FORMAT)}`);
  } catch {
    return false;
  } finally {
    fs.closeSync(fd);
  }
}

function isDirectory(dir: string): boolean {
  return fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
}

/** The names in a folder; none for a folder that is not there or cannot be read (what opens it later says why). */
function namesIn(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
