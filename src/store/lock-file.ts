/**
 * One process drives a run at a time. The lock is a file, written whole to a temporary file and
 * linked into place (a failed write never leaves an empty lock); it names its holder so a
 * refused second process can say who holds the run.
 *
 * The holder keeps the lock alive: a heartbeat rewrites its mtime every few seconds, and checks
 * that the lock is still its own. A lock is taken over when its holder is gone:
 * - on the same host, at once when the holder's pid is dead (or reused by a newer process);
 *   a live pid is refused even when its heartbeat stopped (it may be suspended: --take-over);
 * - from another host (whose processes cannot be seen), once its heartbeat is older than the
 *   lease;
 * - with `takeOver`, at once whatever its state.
 * A holder whose lock was taken over stops before its next write: `assertHeld` refuses it. It
 * costs no system call while the heartbeat keeps up; when the heartbeat fell behind (a busy or
 * suspended process), it reads the lock first. A live holder is given the time to notice before
 * the new holder reads the journal.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { RunLockedError, RunLockLostError } from './errors.ts';
import { environmentProblem } from './fs-problems.ts';
import type { LockOptions, LockTakeOver, RunLock } from './store.ts';
import type { WriteFaultPlan } from './write-faults.ts';
import { readRegularFile } from '../util/regular-file.ts';
import { PRIVATE_FILE } from './state-folder.ts';
import { DEFAULT_LOCK_LEASE_MS } from './lock-lease.ts';

export { DEFAULT_LOCK_LEASE_MS, LOCK_LEASE_RANGE_MS } from './lock-lease.ts';

/** A lock names a process and a time: a larger file is no lock. */
const MAX_LOCK_BYTES = 64 * 1024;

/** The heartbeat's longest period; a short lease (tests) beats faster. */
const MAX_HEARTBEAT_MS = 2_000;
/** A lock that cannot be parsed, younger than this, may be an old release writing it this moment. */
const UNREADABLE_GRACE_MS = 2_000;

export function heartbeatFor(leaseMs: number): number {
  return Math.min(MAX_HEARTBEAT_MS, Math.max(50, Math.floor(leaseMs / 10)));
}

/** How long a holder trusts its last look at the lock before it writes without looking again. */
function trustWindow(heartbeatMs: number): number {
  return heartbeatMs * 1.5;
}

/** How long a new holder waits for a live old one to notice it lost the lock. */
function noticeDelay(heartbeatMs: number): number {
  return heartbeatMs * 2 + 250;
}

interface LockHolderInfo {
  pid: number;
  host: string;
  /** The kernel's start time of the process, to tell a reused pid from the holder. */
  processStart: string | null;
  since: string;
  command: string;
  /** How often the holder refreshes the lock's mtime (absent in locks of older releases). */
  heartbeatMs?: number;
  /** Makes each lock's text unique, so a holder can tell its own lock from a successor's. */
  token?: string;
}

export interface LockFileOptions extends LockOptions {
  leaseMs?: number;
  faults?: WriteFaultPlan;
}

/** What a process found in place of the lock it wanted. */
type Found = { kind: 'gone' } | { kind: 'unreadable'; text: string; mtimeMs: number } | { kind: 'held'; text: string; info: LockHolderInfo; mtimeMs: number };

type Verdict = { stale: true; why: string } | { stale: false; advice: string };

/**
 * Takes the run's lock, or throws RunLockedError saying who holds it and how to proceed. When a
 * live holder was taken over, resolves only once it had the time to notice.
 */
export async function acquireLockFile(path: string, location: string, options: LockFileOptions = {}): Promise<HeldLockFile> {
  const leaseMs = options.leaseMs ?? DEFAULT_LOCK_LEASE_MS;
  const heartbeatMs = heartbeatFor(leaseMs);
  const mine: LockHolderInfo = {
    pid: process.pid,
    host: os.hostname(),
    processStart: ownProcessStart(),
    since: new Date().toISOString(),
    command: process.argv.slice(1).join(' ').slice(0, 200),
    heartbeatMs,
    token: randomUUID(),
  };
  const text = JSON.stringify(mine);
  let takenOver: LockTakeOver | null = null;
  let waitMs = 0;
  for (let attempt = 0; attempt < 5; attempt++) {
    if (createLock(path, text, options.faults)) {
      if (waitMs > 0) await sleep(waitMs);
      return new HeldLockFile(path, location, text, describe(mine), heartbeatMs, takenOver && { ...takenOver, waitedMs: waitMs });
    }
    const found = readLock(path);
    if (found.kind === 'gone') continue;
    const verdict = judge(found, leaseMs);
    if (!verdict.stale && !options.takeOver) throw new RunLockedError(location, describeFound(found), verdict.advice);
    if (!moveAside(path, found, leaseMs, options.takeOver === true)) continue;
    if (found.kind === 'held' && (options.takeOver || found.info.host !== os.hostname())) {
      takenOver = { holder: describeFound(found), why: verdict.stale ? verdict.why : 'taken over with --take-over', waitedMs: 0 };
    }
    // A holder that may be alive is given the time its heartbeat needs to see the lock is gone.
    if (!verdict.stale && found.kind === 'held' && found.info.heartbeatMs) waitMs = noticeDelay(found.info.heartbeatMs);
  }
  throw new RunLockedError(location, 'another process that keeps taking the lock', 'Run the command again in a moment.');
}

/** The lock this process holds, kept alive by its heartbeat until released. */
export class HeldLockFile implements RunLock {
  private released = false;
  private lost: string | null = null;
  private confirmedAt = performance.now();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly path: string,
    private readonly location: string,
    private readonly text: string,
    readonly holder: string,
    private readonly heartbeatMs: number,
    readonly takenOver: LockTakeOver | null,
  ) {
    this.timer = setInterval(() => this.beat(), heartbeatMs);
    this.timer.unref();
  }

  /**
   * Throws RunLockLostError once the lock is no longer this process's. Free while the heartbeat
   * keeps up; otherwise it looks at the lock first.
   */
  assertHeld(): void {
    if (!this.lost && !this.released && performance.now() - this.confirmedAt > trustWindow(this.heartbeatMs)) this.confirm();
    if (this.lost) throw new RunLockLostError(this.location, this.lost);
  }

  async release(): Promise<void> {
    this.releaseSync();
  }

  /** For exit handlers, which cannot wait. */
  releaseSync(): void {
    if (this.released) return;
    this.released = true;
    clearInterval(this.timer);
    if (this.lost) return;
    try {
      if (readRegularFile(this.path, "the run's lock", MAX_LOCK_BYTES) === this.text) fs.unlinkSync(this.path);
    } catch {
      // Already gone: nothing to release.
    }
  }

  private beat(): void {
    try {
      this.confirm();
    } catch {
      // A passing read failure: the next write looks again, and reports it if it stays.
    }
  }

  /** Looks at the lock: still ours, its mtime is refreshed; another's or gone, the lock is lost. */
  private confirm(): void {
    let text: string;
    try {
      text = readRegularFile(this.path, "the run's lock", MAX_LOCK_BYTES);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw environmentProblem(error, `read the lock ${this.path}`, this.path) ?? error;
      return this.lose('its lock file was removed, so another process may have started driving it');
    }
    if (text !== this.text) {
      const found = parse(text);
      return this.lose(`its lock was taken over by ${found ? describe(found) : 'another process'}`);
    }
    const now = new Date();
    try {
      fs.utimesSync(this.path, now, now);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return this.lose('its lock file was removed, so another process may have started driving it');
      throw environmentProblem(error, `refresh the lock ${this.path}`, this.path) ?? error;
    }
    this.confirmedAt = performance.now();
  }

  private lose(why: string): void {
    this.lost = why;
    clearInterval(this.timer);
  }
}

/** Writes the lock whole beside its place and links it in: false if a lock is there already. */
function createLock(path: string, text: string, faults: WriteFaultPlan | undefined): boolean {
  const tmp = `${path}.new-${process.pid}`;
  try {
    const fd = fs.openSync(tmp, 'w', PRIVATE_FILE);
    // Not fsynced: a lock only has to outlive its holder's process, not the machine.
    try {
      const fault = faults?.checkPoint('lock-write');
      if (fault) {
        fs.writeSync(fd, text.slice(0, text.length >> 1));
        throw fault;
      }
      fs.writeSync(fd, text);
    } finally {
      fs.closeSync(fd);
    }
    fs.linkSync(tmp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw environmentProblem(error, `write the run's lock ${path}`, path) ?? error;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

function readLock(path: string): Found {
  let text: string;
  let mtimeMs: number;
  try {
    text = readRegularFile(path, "the run's lock", MAX_LOCK_BYTES);
    mtimeMs = fs.statSync(path).mtimeMs;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'gone' };
    throw environmentProblem(error, `read the run's lock ${path}`, path) ?? error;
  }
  const info = parse(text);
  return info ? { kind: 'held', text, info, mtimeMs } : { kind: 'unreadable', text, mtimeMs };
}

function parse(text: string): LockHolderInfo | null {
  try {
    const info = JSON.parse(text) as LockHolderInfo;
    return info && typeof info.pid === 'number' && typeof info.host === 'string' ? info : null;
  } catch {
    return null;
  }
}

/** Whether a lock found in place may be taken over, and if not, what the user can do. */
function judge(found: Exclude<Found, { kind: 'gone' }>, leaseMs: number): Verdict {
  const age = Date.now() - found.mtimeMs;
  if (found.kind === 'unreadable') {
    return age < UNREADABLE_GRACE_MS
      ? { stale: false, advice: 'Run the command again in a few seconds.' }
      : { stale: true, why: 'the lock file was empty or unreadable (a failed write or a crash left it)' };
  }
  const { info } = found;
  const takeOver = 'If you are sure it no longer drives the run, run the same command with --take-over.';
  if (info.host !== os.hostname()) {
    const lease = Math.max(leaseMs, 3 * (info.heartbeatMs ?? 0));
    if (age > lease) return { stale: true, why: `its last heartbeat is ${seconds(age)} old, past the ${seconds(lease)} lease of a lock from another host` };
    return {
      stale: false,
      advice:
        `A lock from another host is taken over once its heartbeat is older than ${seconds(lease)} ` +
        `(in ${seconds(lease - age)} if ${info.host} is gone: run the command again then). ${takeOver}`,
    };
  }
  if (!isAlive(info)) return { stale: true, why: `pid ${info.pid} is no longer running` };
  const stopped =
    info.heartbeatMs && age > Math.max(leaseMs, 3 * info.heartbeatMs)
      ? ` Its heartbeat stopped ${seconds(age)} ago: it may be suspended (kill -CONT ${info.pid}) or hung.`
      : '';
  return { stale: false, advice: `Wait for it to finish, or stop it (kill ${info.pid}).${stopped} ${takeOver}` };
}

function isAlive(holder: LockHolderInfo): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const start = processStartOf(holder.pid);
  return !(holder.processStart && start && start !== holder.processStart);
}

/**
 * Moves the found lock aside and deletes it; false when it was gone already (a racing process
 * moved it first). Without takeOver, a lock that is not the one judged stale (a live process
 * took it in between) is given back.
 */
function moveAside(path: string, found: Exclude<Found, { kind: 'gone' }>, leaseMs: number, takeOver: boolean): boolean {
  const aside = `${path}.stale-${process.pid}`;
  try {
    fs.renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw environmentProblem(error, `take over the run's lock ${path}`, path) ?? error;
  }
  try {
    if (!takeOver) {
      const moved = readLock(aside);
      if (moved.kind !== 'gone' && moved.text !== found.text && !judge(moved, leaseMs).stale) {
        try {
          fs.linkSync(aside, path);
        } catch {
          // Someone else holds it now; either way the run stays locked.
        }
        return false;
      }
    }
    return true;
  } finally {
    fs.rmSync(aside, { force: true });
  }
}

/**
 * This process's start time, read once: it never changes while the process lives, and reading
 * /proc/<pid>/stat at every lock taken cost a file open and the kernel's tally of the process's
 * threads (a process that runs many runs takes many locks).
 */
let ownStart: string | null | undefined;

function ownProcessStart(): string | null {
  if (ownStart === undefined) ownStart = processStartOf(process.pid);
  return ownStart;
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

function describe(holder: LockHolderInfo): string {
  return `pid ${holder.pid} on ${holder.host}, since ${holder.since}${holder.command ? `: ${holder.command}` : ''}`;
}

function describeFound(found: Exclude<Found, { kind: 'gone' }>): string {
  const age = seconds(Date.now() - found.mtimeMs);
  if (found.kind === 'unreadable') return `a lock file that cannot be read (${found.text.length} bytes, written ${age} ago)`;
  const { info } = found;
  // A lock of an older release has no heartbeat: its mtime is when it was written.
  const beat = info.heartbeatMs ? `last heartbeat ${age} ago` : `locked ${age} ago`;
  return `pid ${info.pid} on ${info.host}, since ${info.since}, ${beat}${info.command ? `: ${info.command}` : ''}`;
}

function seconds(ms: number): string {
  return `${Math.max(0, Math.round(ms / 100) / 10)} s`;
}
