/**
 * One process drives a run at a time. The lock is a file created exclusively; it names its
 * holder so a refused second process can say who holds the run. A holder killed with SIGKILL
 * leaves the file behind: on the same host a dead holder (no such pid, or a pid reused by a
 * newer process) is taken over, so a resume after a crash needs no manual cleanup.
 */
import fs from 'node:fs';
import os from 'node:os';
import { RunLockedError } from './errors.ts';
import type { RunLock } from './store.ts';

interface LockHolderInfo {
  pid: number;
  host: string;
  /** The kernel's start time of the process, to tell a reused pid from the holder. */
  processStart: string | null;
  since: string;
  command: string;
}

export function acquireLockFile(path: string, location: string): RunLock {
  const mine: LockHolderInfo = {
    pid: process.pid,
    host: os.hostname(),
    processStart: processStartOf(process.pid),
    since: new Date().toISOString(),
    command: process.argv.slice(1).join(' ').slice(0, 200),
  };
  const text = JSON.stringify(mine);
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const fd = fs.openSync(path, 'wx');
      // Not fsynced: a lock only has to outlive its holder's process, not the machine.
      try {
        fs.writeSync(fd, text);
      } finally {
        fs.closeSync(fd);
      }
      return new LockFile(path, text, describe(mine));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = readHolder(path);
    if (holder === 'gone') continue;
    if (holder === 'unreadable') {
      // A lock being written this very moment, or one left half-written by a crash.
      if (ageMs(path) < 2000) throw new RunLockedError(location, 'a process that is starting up');
    } else if (isAlive(holder)) {
      throw new RunLockedError(location, describe(holder));
    }
    takeOverStale(path);
  }
  throw new RunLockedError(location, 'another process that keeps taking the lock');
}

class LockFile implements RunLock {
  private released = false;
  constructor(
    private readonly path: string,
    private readonly text: string,
    readonly holder: string,
  ) {}

  async release(): Promise<void> {
    this.releaseSync();
  }

  /** For exit handlers, which cannot wait. */
  releaseSync(): void {
    if (this.released) return;
    this.released = true;
    try {
      if (fs.readFileSync(this.path, 'utf8') === this.text) fs.unlinkSync(this.path);
    } catch {
      // Already gone: nothing to release.
    }
  }
}

function readHolder(path: string): LockHolderInfo | 'gone' | 'unreadable' {
  let raw: string;
  try {
    raw = fs.readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw error;
  }
  try {
    const info = JSON.parse(raw) as LockHolderInfo;
    return typeof info.pid === 'number' && typeof info.host === 'string' ? info : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

function isAlive(holder: LockHolderInfo): boolean {
  if (holder.host !== os.hostname()) return true; // cannot look at another machine's processes
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const start = processStartOf(holder.pid);
  return !(holder.processStart && start && start !== holder.processStart);
}

/** Moves the stale lock aside and deletes it; a racing process that moved it first simply wins. */
function takeOverStale(path: string): void {
  const aside = `${path}.stale-${process.pid}`;
  try {
    fs.renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = readHolder(aside);
  if (moved !== 'gone' && moved !== 'unreadable' && isAlive(moved)) {
    // Between our check and the rename a live process took the lock: give it back.
    try {
      fs.linkSync(aside, path);
    } catch {
      // Someone else holds it now; either way the run stays locked.
    }
  }
  fs.rmSync(aside, { force: true });
}

function processStartOf(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (starttime); fields are counted after the ")" that ends the command name.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function ageMs(path: string): number {
  try {
    return Date.now() - fs.statSync(path).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function describe(holder: LockHolderInfo): string {
  return `pid ${holder.pid} on ${holder.host}, since ${holder.since}${holder.command ? `: ${holder.command}` : ''}`;
}
