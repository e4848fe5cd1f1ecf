/**
 * What stands in the state folder where a regular file belongs (a FIFO, a symbolic link to
 * /dev/zero) is refused with its path, at once: never opened into a blocked thread, never read
 * without end. The journal, the lock, a decision and a control request, each through the CLI.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliRun, runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

function mkfifo(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const made = spawnSync('mkfifo', [file]);
  expect(made.status, String(made.stderr)).toBe(0);
}

function timed(args: string[], cwd: string): CliRun & { ms: number } {
  const started = Date.now();
  const run = runCli(args, { cwd });
  const ms = Date.now() - started;
  console.log(`[state folder] ${args.join(' ')}: exit ${run.code} in ${ms} ms`);
  return { ...run, ms };
}

/** A demo run that waits for the approval of toolu_03 (exit 7). */
function waitingRun(): string {
  const dir = tempDir('da-state-files-');
  expect(runCli(['demo', '--require-approval', 'write_report', '--no-wait'], { cwd: dir }).code).toBe(7);
  return dir;
}

describe('non-regular files in the state folder', () => {
  it('a FIFO as the journal: status, history and --resume are refused (exit 2), naming it', () => {
    const dir = tempDir('da-state-files-');
    mkfifo(path.join(dir, '.durable-agent', 'journal.jsonl'));
    for (const args of [['status'], ['history'], ['demo', '--resume']]) {
      const run = timed(args, dir);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain('journal.jsonl should be the journal, a regular file, but it is a FIFO');
    }
  });

  it('a FIFO as the lock: --resume is refused (exit 2), naming it', () => {
    const dir = tempDir('da-state-files-');
    expect(runCli(['demo'], { cwd: dir }).code).toBe(0);
    mkfifo(path.join(dir, '.durable-agent', 'lock'));
    const run = timed(['demo', '--resume'], dir);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain("lock should be the run's lock, a regular file, but it is a FIFO");
  });

  it('a FIFO or a link to /dev/zero as a decision: pending lists the calls and names the file; the run goes on waiting', () => {
    for (const plant of ['fifo', 'link'] as const) {
      const dir = waitingRun();
      const file = path.join(dir, '.durable-agent', 'decisions', 'toolu_03.json');
      if (plant === 'fifo') mkfifo(file);
      else {
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.symlinkSync('/dev/zero', file);
      }
      // The calls are listed all the same, the one whose file is in the way with it named.
      const pending = timed(['pending'], dir);
      expect(pending.code, pending.stderr).toBe(0);
      expect(pending.stdout).toMatch(/toolu_03 +write_report +approval .* its decision file cannot be read \(below\)/);
      expect(pending.stderr).toContain(`${file} is not a decision this durable-agent can read (it is ${plant === 'fifo' ? 'a FIFO' : 'a symbolic link'}, not a regular file)`);
      const resumed = timed(['demo', '--resume', '--no-wait'], dir);
      expect(resumed.code, resumed.stderr).toBe(7);
      // The waiting run says what is in the way of the decision, and what to do.
      expect(resumed.stderr).toContain(`[ALERT] the decision file ${file} for toolu_03 cannot be read (it is ${plant === 'fifo' ? 'a FIFO' : 'a symbolic link'}, not a regular file)`);
    }
  });

  it('a link to /dev/zero or a FIFO as a cancel request: a resume is not crashed or blocked by it', () => {
    for (const plant of ['link', 'fifo'] as const) {
      const dir = waitingRun();
      const file = path.join(dir, '.durable-agent', 'control', 'cancel.json');
      if (plant === 'fifo') mkfifo(file);
      else {
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.symlinkSync('/dev/zero', file);
      }
      const resumed = timed(['demo', '--resume', '--no-wait'], dir);
      expect([2, 7], resumed.stderr).toContain(resumed.code);
      expect(resumed.signal).toBeNull();
      expect(resumed.stderr).not.toContain('bad_alloc');
    }
  });
});
