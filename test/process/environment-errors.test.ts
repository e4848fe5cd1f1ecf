/**
 * Problems of the environment, not of the run: a file where a directory belongs, a directory
 * where the journal belongs, a full disk while writing the lock or the sample notes, permissions.
 * Each exits 4 naming the path and what to fix, changes nothing, and once fixed the same
 * command goes on. Real files, the real CLI.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreAccessError } from '../../src/store/errors.ts';
import { environmentProblem } from '../../src/store/fs-problems.ts';
import { BIN, type CliRun, cliEnv, runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const STATE = '.durable-agent';

function crashedDemo(): string {
  const dir = tempDir();
  const killed = runCli(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-effect-write:2' } });
  expect(killed.code).toBe(137);
  return dir;
}

function expectEnvironmentExit(run: CliRun, ...phrases: string[]): void {
  expect(run.code, run.stderr).toBe(4);
  expect(run.stderr).not.toContain('unexpected error');
  expect(run.stderr).toContain('run the command again');
  for (const phrase of phrases) expect(run.stderr).toContain(phrase);
}

describe('a file or directory in the way', () => {
  it('a .durable-agent that is a file: exit 4 naming it; once moved, the demo runs', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, STATE), 'not a directory');
    const refused = runCli(['demo'], { cwd: dir });
    expectEnvironmentExit(refused, `${path.join(dir, STATE)} is a file, where a directory belongs`, 'move or remove that file');
    expect(fs.readFileSync(path.join(dir, STATE), 'utf8')).toBe('not a directory');
    for (const command of [['demo', '--resume'], ['status'], ['history']]) {
      expectEnvironmentExit(runCli(command, { cwd: dir }), `${path.join(dir, STATE)} is a file`);
    }
    fs.rmSync(path.join(dir, STATE));
    const ran = runCli(['demo'], { cwd: dir });
    expect(ran.code, ran.stderr).toBe(0);
  });

  it('a journal that is a directory: exit 4 naming it, for the run and for status; once moved, the demo runs', () => {
    const dir = tempDir();
    const journal = path.join(dir, STATE, 'journal.jsonl');
    fs.mkdirSync(journal, { recursive: true });
    for (const command of [['demo'], ['demo', '--resume'], ['status'], ['history']]) {
      expectEnvironmentExit(runCli(command, { cwd: dir }), `${journal} is a directory, where a file belongs`);
    }
    expect(fs.statSync(journal).isDirectory()).toBe(true);
    fs.rmdirSync(journal);
    const ran = runCli(['demo'], { cwd: dir });
    expect(ran.code, ran.stderr).toBe(0);
  });
});

describe('a full disk', () => {
  it('while writing the lock: exit 4, no lock left behind, and the next resume goes on at once', () => {
    const dir = crashedDemo();
    const lock = path.join(dir, STATE, 'lock');
    fs.rmSync(lock, { force: true });
    const failed = runCli(['demo', '--resume'], { cwd: dir, env: { DURABLE_AGENT_FAIL_WRITE: 'lock-write:1' } });
    expectEnvironmentExit(failed, 'no space left on the device', 'ENOSPC', 'free disk space', lock);
    expect(fs.readdirSync(path.join(dir, STATE)).filter((name) => name.startsWith('lock'))).toEqual([]);
    const resumed = runCli(['demo', '--resume'], { cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('[done]');
  });

  it('while writing the sample notes: exit 4, no cut-off notes left, and the demo runs once there is room', () => {
    const dir = tempDir();
    const failed = runCli(['demo'], { cwd: dir, env: { DURABLE_AGENT_FAIL_WRITE: 'notes-write:1' } });
    expectEnvironmentExit(failed, 'sales-notes.txt', 'ENOSPC', 'free disk space');
    expect(fs.readdirSync(dir)).toEqual([]);
    const ran = runCli(['demo'], { cwd: dir });
    expect(ran.code, ran.stderr).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'report.txt'), 'utf8')).toContain('North region closed 14 new accounts');
  });
});

/**
 * The CLI as a user without the rights root has: root ignores file modes, so a root test
 * process runs it as nobody.
 */
function runUnprivileged(args: string[], cwd: string): CliRun {
  const isRoot = process.getuid?.() === 0;
  const command = isRoot ? 'setpriv' : process.execPath;
  const argv = isRoot ? ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, BIN, ...args] : [BIN, ...args];
  const result = spawnSync(command, argv, { cwd, env: cliEnv(), encoding: 'utf8', timeout: 60_000 });
  if (result.error) throw result.error;
  return { code: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

describe('permissions', () => {
  it('EACCES on the lock and on the journal: exit 4 naming the path; with access given back, the resume goes on', () => {
    const dir = crashedDemo();
    const state = path.join(dir, STATE);
    fs.rmSync(path.join(state, 'lock'), { force: true });
    // Readable by all, writable by its owner only: the lock cannot be made.
    fs.chmodSync(dir, 0o755);
    fs.chmodSync(state, 0o755);
    fs.chmodSync(path.join(state, 'journal.jsonl'), 0o644);
    const noLock = runUnprivileged(['demo', '--resume'], dir);
    expectEnvironmentExit(noLock, 'permission denied', 'EACCES', path.join(state, 'lock'));
    // The journal unreadable: status cannot read it.
    fs.chmodSync(path.join(state, 'journal.jsonl'), 0o600);
    const noRead = runUnprivileged(['status'], dir);
    expectEnvironmentExit(noRead, 'permission denied', 'EACCES', path.join(state, 'journal.jsonl'));
    fs.chmodSync(path.join(state, 'journal.jsonl'), 0o644);
    const resumed = runCli(['demo', '--resume'], { cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
  });

  it("approve and signal on a run another user cannot read: exit 4, the folder is not theirs to read (not 'No run is stored')", () => {
    const dir = crashedDemo();
    const state = path.join(dir, STATE);
    // The folder the run is in may be entered; the state folder is its owner's alone (0700, as made).
    fs.chmodSync(dir, 0o755);
    const asRoot = process.getuid?.() === 0;
    // Not root, the test's own user is the other one: its state folder is made unreadable to it.
    if (!asRoot) fs.chmodSync(state, 0o000);
    try {
      for (const args of [['approve', 'toolu_03'], ['signal', 'go']]) {
        const refused = runUnprivileged(args, dir);
        expect(refused.stderr, args[0]).not.toContain('No run is stored');
        expectEnvironmentExit(refused, 'permission denied', 'EACCES', state);
      }
    } finally {
      if (!asRoot) fs.chmodSync(state, 0o700);
    }
    // Its owner still decides as ever: the call is not one that waits, and the run is found.
    const owner = runCli(['approve', 'toolu_03'], { cwd: dir });
    expect(owner.stderr).not.toContain('No run is stored');
  });

  it('classifies every environment errno, and leaves the others alone', () => {
    const fail = (code: string, syscall = 'open') => Object.assign(new Error(`${code}: x`), { code, syscall, path: '/data/run/.durable-agent/journal.jsonl' });
    for (const [code, words] of [
      ['EACCES', 'permission denied'],
      ['EPERM', 'not permitted'],
      ['EROFS', 'is read-only'],
      ['ENOSPC', 'no space left'],
      ['EDQUOT', 'quota'],
      ['EISDIR', 'is a directory'],
      ['EMFILE', 'too many files open'],
      ['EIO', 'input/output error'],
    ] as const) {
      const problem = environmentProblem(fail(code), 'read the journal', '/x');
      expect(problem, code).toBeInstanceOf(StoreAccessError);
      expect(problem!.message).toContain(words);
      if (code !== 'EMFILE') expect(problem!.message).toContain('/data/run/.durable-agent/journal.jsonl');
    }
    expect(environmentProblem(fail('ENOENT'), 'read', '/x')).toBeNull();
    expect(environmentProblem(fail('EEXIST', 'link'), 'read', '/x')).toBeNull();
    expect(environmentProblem(new Error('a bug'), 'read', '/x')).toBeNull();
  });
});
