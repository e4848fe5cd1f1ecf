/**
 * The run's lock across hosts and over live holders: a heartbeat keeps it, a lock from another
 * host whose heartbeat is past the lease is taken over, --take-over takes a live one at once,
 * and the old holder then stops before it writes anything more. Real files, real CLI processes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { RunLockedError, RunLockLostError } from '../../src/store/errors.ts';
import { RunFolderStore } from '../../src/store/file-store.ts';
import { JOURNAL_FORMAT, JOURNAL_VERSION, type JournalRecord } from '../../src/store/journal/journal-record.ts';
import { type CliRun, runCli, runCliAsync, startCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { storeRecord } from '../helpers/journal-records.ts';

const FOREIGN_HOST = 'a-host-that-was-recreated';

function foreignLock(file: string, heartbeatAgeMs: number, host = FOREIGN_HOST, pid = 4242, heartbeatMs = 2000): void {
  fs.writeFileSync(
    file,
    JSON.stringify({ pid, host, processStart: null, since: '2026-01-01T00:00:00.000Z', command: 'durable-agent demo', heartbeatMs, token: 'x' }),
  );
  const then = new Date(Date.now() - heartbeatAgeMs);
  fs.utimesSync(file, then, then);
}

/** A demo run killed after its second ledger write: resumable, its lock left behind. */
function crashedDemo(): string {
  const dir = tempDir();
  const killed = runCli(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-effect-write:2' } });
  expect(killed.code).toBe(137);
  return dir;
}

function lockFile(dir: string): string {
  return path.join(dir, '.durable-agent', 'lock');
}

function record(seq: number): JournalRecord {
  return storeRecord(seq, seq === 0 ? { task: 'the task' } : {});
}

describe('a lock from another host', () => {
  it('is taken over once its heartbeat is older than the lease, saying who held it', () => {
    const dir = crashedDemo();
    foreignLock(lockFile(dir), 60_000);
    const resumed = runCli(['demo', '--resume'], { cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('[done]');
    expect(resumed.stderr).toContain(`[lock] took the run over from pid 4242 on ${FOREIGN_HOST}, since 2026-01-01T00:00:00.000Z`);
    expect(resumed.stderr).toContain('past the 30 s lease');
    expect(fs.existsSync(lockFile(dir))).toBe(false);
  });

  it('is refused while its heartbeat is fresh, with what to do', () => {
    const dir = crashedDemo();
    foreignLock(lockFile(dir), 1_000);
    const refused = runCli(['demo', '--resume'], { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`pid 4242 on ${FOREIGN_HOST}`);
    expect(refused.stderr).toContain('taken over once its heartbeat is older than 30 s');
    expect(refused.stderr).toContain('--take-over');
    // The lease is the user's to set (not below three of the holder's heartbeats): a shorter one takes it over.
    foreignLock(lockFile(dir), 1_000, FOREIGN_HOST, 4242, 100);
    const shortLease = runCli(['demo', '--resume'], { cwd: dir, env: { DURABLE_AGENT_LOCK_LEASE_MS: '500' } });
    expect(shortLease.code, shortLease.stderr).toBe(0);
    expect(shortLease.stderr).toContain('[lock] took the run over');
  });

  it('is taken at once with --take-over', () => {
    const dir = crashedDemo();
    foreignLock(lockFile(dir), 1_000);
    const taken = runCli(['demo', '--resume', '--take-over'], { cwd: dir });
    expect(taken.code, taken.stderr).toBe(0);
    expect(taken.stderr).toContain(`[lock] took the run over from pid 4242 on ${FOREIGN_HOST}`);
    expect(taken.stderr).toContain('taken over with --take-over');
  });

  it('refuses a lease that is not one', () => {
    const dir = crashedDemo();
    for (const bad of ['0', '-5', '1e3', 'soon', '99999999999999']) {
      const run = runCli(['demo', '--resume'], { cwd: dir, env: { DURABLE_AGENT_LOCK_LEASE_MS: bad } });
      expect(run.code, bad).toBe(2);
      expect(run.stderr).toContain('DURABLE_AGENT_LOCK_LEASE_MS');
    }
  });
});

describe('a lock on this host', () => {
  it('held by a live process whose heartbeat stopped is refused: it may be suspended', async () => {
    const dir = path.join(tempDir(), 'store');
    fs.mkdirSync(dir, { recursive: true });
    foreignLock(path.join(dir, 'lock'), 120_000, os.hostname(), process.pid);
    const error = await new RunFolderStore(dir).lock().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunLockedError);
    expect((error as Error).message).toContain('heartbeat stopped');
    expect((error as Error).message).toContain(`kill -CONT ${process.pid}`);
    expect((error as Error).message).toContain('--take-over');
  });

  it('that is empty or unreadable is refused for a moment (it may be being written), then taken over', async () => {
    const dir = path.join(tempDir(), 'store');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'lock'), '');
    await expect(new RunFolderStore(dir).lock()).rejects.toThrow(/run the command again in a few seconds/i);
    const old = new Date(Date.now() - 5_000);
    fs.utimesSync(path.join(dir, 'lock'), old, old);
    const lock = await new RunFolderStore(dir).lock();
    await lock.release();
  });

  it('is kept fresh by its holder\'s heartbeat', async () => {
    const dir = path.join(tempDir(), 'store');
    const store = new RunFolderStore(dir, { lockLeaseMs: 1_000 });
    const lock = await store.lock();
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(path.join(dir, 'lock'), old, old);
    // Touched again by the heartbeat: its time is now, not the minute-old one set above.
    await vi.waitFor(() => expect(fs.statSync(path.join(dir, 'lock')).mtimeMs).toBeGreaterThan(old.getTime() + 30_000), { timeout: 30_000, interval: 50 });
    await lock.release();
    expect(fs.existsSync(path.join(dir, 'lock'))).toBe(false);
  });
});

describe('a holder whose lock was taken over', () => {
  it('writes nothing more: its next append is refused and the journal is left as the new holder found it', async () => {
    const dir = path.join(tempDir(), 'store');
    const first = new RunFolderStore(dir, { lockLeaseMs: 1_000 });
    const held = await first.lock();
    await first.create({ format: JOURNAL_FORMAT, version: JOURNAL_VERSION, runId: 'r', createdAt: 1 }, record(0));
    await first.append(record(1));
    const second = new RunFolderStore(dir, { lockLeaseMs: 1_000 });
    const started = Date.now();
    const taken = await second.lock({ takeOver: true });
    // The old holder is alive (this very process): the new one gave it the time to notice.
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(taken.takenOver?.why).toBe('taken over with --take-over');
    expect(taken.takenOver?.holder).toContain(`pid ${process.pid}`);
    const before = fs.readFileSync(path.join(dir, 'journal.jsonl'));
    await expect(first.append(record(2))).rejects.toThrow(RunLockLostError);
    await expect(first.assertOwnership()).rejects.toThrow(/taken over by pid/);
    expect(fs.readFileSync(path.join(dir, 'journal.jsonl')).equals(before)).toBe(true);
    await held.release(); // the lost lock is not the old holder's to remove
    expect(fs.existsSync(path.join(dir, 'lock'))).toBe(true);
    const loaded = await second.load({ repair: true });
    expect(loaded.records).toHaveLength(2);
    await second.append(record(2));
    await taken.release();
  });

  it('stops a live CLI run before its next write, and the new holder finishes it (real processes)', async () => {
    const dir = tempDir();
    const env = { DURABLE_AGENT_LOCK_LEASE_MS: '1000' };
    const old = startCli(['demo', '--pace', '700', '--verbose'], { cwd: dir, env });
    await vi.waitFor(() => expect(old.output()).toContain('[turn 1][save A]'), { timeout: 30_000, interval: 20 });
    const taker = await runCliAsync(['demo', '--resume', '--take-over', '--verbose'], { cwd: dir, env });
    const oldRun = await old.done;
    expect(taker.code, taker.stderr).toBe(0);
    expect(taker.stdout).toContain('[done]');
    expect(taker.stderr).toContain(`[lock] took the run over from pid ${old.child.pid} on ${os.hostname()}`);
    expect(taker.stderr).toContain('taken over with --take-over');
    expect(oldRun.code, oldRun.stderr).toBe(2);
    expect(oldRun.stderr).toContain('no longer holds the run');
    expect(oldRun.stdout).not.toContain('[done]');
    // Every record was written by exactly one of them, the old holder's all before the new one's.
    const oldSeqs = savedSeqs(oldRun);
    const newSeqs = savedSeqs(taker);
    expect(oldSeqs.length).toBeGreaterThan(0);
    expect(Math.max(...oldSeqs)).toBeLessThan(Math.min(...newSeqs));
    const status = runCli(['status', '--json'], { cwd: dir });
    expect(status.code, status.stderr).toBe(0);
    const parsed = JSON.parse(status.stdout) as { state: string; records: number };
    expect(parsed.state).toBe('done');
    expect(parsed.records).toBe(oldSeqs.length + newSeqs.length);
    const audit = path.join(dir, 'report-audit.log');
    expect(fs.existsSync(audit) ? fs.readFileSync(audit, 'utf8').trim().split('\n').length : 0).toBe(1);
  });

  it('a suspended holder taken over with --take-over writes nothing when it wakes (SIGSTOP, SIGCONT)', async () => {
    const dir = tempDir();
    const env = { DURABLE_AGENT_LOCK_LEASE_MS: '1000' };
    const old = startCli(['demo', '--pace', '500', '--verbose'], { cwd: dir, env });
    await vi.waitFor(() => expect(old.output()).toContain('[turn 1][save A]'), { timeout: 30_000, interval: 20 });
    old.child.kill('SIGSTOP');
    try {
      const refused = await runCliAsync(['demo', '--resume'], { cwd: dir, env });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`pid ${old.child.pid}`);
      const taker = await runCliAsync(['demo', '--resume', '--take-over', '--verbose'], { cwd: dir, env });
      expect(taker.code, taker.stderr).toBe(0);
      expect(taker.stderr).toContain(`[lock] took the run over from pid ${old.child.pid}`);
      const journalBefore = fs.readFileSync(path.join(dir, '.durable-agent', 'journal.jsonl'));
      old.child.kill('SIGCONT');
      const oldRun = await old.done;
      expect(oldRun.code, oldRun.stderr).toBe(2);
      expect(oldRun.stderr).toContain('no longer holds the run');
      expect(fs.readFileSync(path.join(dir, '.durable-agent', 'journal.jsonl')).equals(journalBefore)).toBe(true);
      expect(Math.max(...savedSeqs(oldRun))).toBeLessThan(Math.min(...savedSeqs(taker)));
      const status = runCli(['status', '--json'], { cwd: dir });
      expect(status.code, status.stderr).toBe(0);
      expect((JSON.parse(status.stdout) as { state: string }).state).toBe('done');
    } finally {
      old.child.kill('SIGCONT');
    }
  });
});

/** The record numbers a --verbose run says it saved. */
function savedSeqs(run: CliRun): number[] {
  return [...run.stderr.matchAll(/^\[save\] .* record=(\d+) /gm)].map((match) => Number(match[1]));
}

