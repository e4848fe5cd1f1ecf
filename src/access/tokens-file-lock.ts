/**
 * One change to a tokens file at a time. `token add` and `token remove` read the file, change its
 * list and write it whole; two of them at once, each writing what it read plus its own change,
 * would lose the first one's. A lock file beside it (`FILE.lock`, made with O_EXCL, naming its
 * holder's pid) makes them take turns: a change takes milliseconds, so the next one waits for it.
 * A lock whose holder is gone (killed mid-change) is taken over at once.
 */
import fs from 'node:fs';
import { TokensFileBusyError } from './access-errors.ts';

/** How long a change waits for another before it gives up and says who holds the file. */
const WAIT_FOR_MS = 10_000;
const RETRY_EVERY_MS = 10;

export function withTokensFileLock<T>(file: string, body: () => T): T {
  const lock = `${file}.lock`;
  const giveUpAt = Date.now() + WAIT_FOR_MS;
  for (;;) {
    const holder = tryTake(lock);
    if (holder === null) break;
    if (!alive(holder)) {
      takeOverFrom(lock, holder);
      continue;
    }
    if (Date.now() >= giveUpAt) throw new TokensFileBusyError(file, lock, holder);
    sleepSync(RETRY_EVERY_MS);
  }
  try {
    return body();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

/** Null when the lock was made (it is ours now); else the pid of the holder (0 when its lock cannot be read). */
function tryTake(lock: string): number | null {
  let fd: number;
  try {
    fd = fs.openSync(lock, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return holderOf(lock);
  }
  try {
    fs.writeSync(fd, `${process.pid}\n`);
  } finally {
    fs.closeSync(fd);
  }
  return null;
}

function holderOf(lock: string): number {
  try {
    const pid = Number.parseInt(fs.readFileSync(lock, 'utf8'), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : 0;
  } catch {
    return 0;
  }
}

/** Whether the holder may still be changing the file: a lock being written (no pid yet) counts as held. */
function alive(pid: number): boolean {
  if (pid === 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes a dead holder's lock, unless another process replaced it meanwhile: the lock is moved
 * aside first (one of two racing takers moves it), and given back when what was moved is not
 * the dead holder's.
 */
function takeOverFrom(lock: string, dead: number): void {
  const aside = `${lock}.stale-${process.pid}`;
  try {
    fs.renameSync(lock, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    if (holderOf(aside) !== dead) {
      try {
        fs.linkSync(aside, lock);
      } catch {
        // A live process made a new lock meanwhile: the file stays held either way.
      }
    }
  } finally {
    fs.rmSync(aside, { force: true });
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
