/**
 * File-system errors that the environment has to fix (permissions, a full disk, a file where a
 * directory belongs), told apart from bugs and turned into a StoreAccessError that names the
 * path and says what to do. Anything else is left as it is.
 */
import fs from 'node:fs';
import path from 'node:path';
import { StoreAccessError } from './errors.ts';

/** What is wrong and what to do; `at` is the path at fault, or null when it is the one the action names. */
type Explain = (at: string | null) => string;

const on = (at: string | null, preposition = 'on') => (at ? ` ${preposition} ${at}` : '');

const PROBLEMS: Record<string, Explain> = {
  EACCES: (at) => `permission denied${on(at)} (EACCES); give the user running durable-agent read and write access to it (ls -l, chown, chmod)`,
  EPERM: (at) => `the operation is not permitted${on(at)} (EPERM); check the owner, mode and attributes (ls -l, lsattr)`,
  EROFS: (at) => `the file system${on(at, 'of')} is read-only (EROFS); use a --dir on a writable one, or remount it read-write`,
  ENOSPC: (at) => `no space left on the device${on(at, 'of')} (ENOSPC); free disk space (df -h)`,
  EDQUOT: (at) => `the disk quota is used up${on(at)} (EDQUOT); free space or raise the quota`,
  EISDIR: (at) => `${at ?? 'it'} is a directory, where a file belongs (EISDIR); move that directory out of the way`,
  ENOTDIR: (at) => `${at ?? 'a part of the path'} is a file, where a directory belongs (ENOTDIR); move or remove that file`,
  EEXIST: (at) => `${at ?? 'it'} is a file, where a directory belongs (EEXIST); move or remove that file`,
  EMFILE: () => `this process has too many files open (EMFILE); raise the open-file limit (ulimit -n)`,
  ENFILE: () => `the system has too many files open (ENFILE); close other programs or raise the system's limit`,
  EIO: (at) => `an input/output error${on(at)} (EIO): the disk may be failing; check it (dmesg) and copy the directory to a healthy one`,
};

/**
 * The error as a StoreAccessError when the environment caused it, else null. `action` says what
 * was being done ("read the journal /x/.durable-agent/journal.jsonl"), `target` the path meant.
 */
export function environmentProblem(error: unknown, action: string, target: string): StoreAccessError | null {
  if (error instanceof StoreAccessError) return error;
  const errno = error as NodeJS.ErrnoException | null;
  const code = errno?.code;
  if (typeof code !== 'string' || !(code in PROBLEMS)) return null;
  // EEXIST is the environment only where a directory was to be made; elsewhere it is a race to handle.
  if (code === 'EEXIST' && errno?.syscall !== 'mkdir') return null;
  const at = code === 'ENOTDIR' || code === 'EEXIST' ? (fileInTheWay(errno?.path ?? target) ?? target) : (errno?.path ?? target);
  // The action names its path already ("write the lock /x/lock"); the problem names another one only.
  const named = action.endsWith(` ${at}`) && code !== 'ENOTDIR' && code !== 'EEXIST' && code !== 'EISDIR';
  return new StoreAccessError(at, action, code, PROBLEMS[code]!(named ? null : at), error);
}

/** Runs `work`; an environment error in it becomes a StoreAccessError about `action`. */
export function inEnvironment<T>(action: string, target: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw environmentProblem(error, action, target) ?? error;
  }
}

/** The first component of `target` (itself included) that exists and is not a directory. */
function fileInTheWay(target: string): string | null {
  const chain: string[] = [];
  for (let at = path.resolve(target); ; at = path.dirname(at)) {
    chain.unshift(at);
    if (path.dirname(at) === at) break;
  }
  for (const at of chain) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(at);
    } catch {
      return null;
    }
    if (!stat.isDirectory()) return at;
  }
  return null;
}
