/**
 * The demo as a user runs it: the real CLI in a child process, stdout not a terminal.
 */
import fs from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { COMMANDS } from '../../src/cli/command-table.ts';
import { flagOf } from '../../src/cli/options/option.ts';
import { shellQuote } from '../../src/words/shell-command.ts';
import { describe, expect, it, vi } from 'vitest';
import { BIN, REPO, runCli, startCli } from '../helpers/cli.ts';
import { DEMO_PLAIN_LINES } from '../helpers/demo-lines.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KILL_TRANSCRIPT = `[turn 1][save A] pending=read_notes
[turn 1][save B]
[turn 2][save A] pending=count_words
[turn 2][save B]
[turn 3][save A] pending=write_report
[kill] simulated kill at after-effect-write:3
`;

const RESUME_TRANSCRIPT = `[resume] read turn=3 pending=write_report
[resume][reconcile] tool_use_id=toolu_03 name=write_report ledger hit, reusing result, not re-running
[turn 3][save B] filled in this turn's tool result after resume
[done] Report written to report.txt, task complete.
`;

function auditLines(dir: string): string[] {
  const file = path.join(dir, 'report-audit.log');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : [];
}

describe('the lesson transcripts', () => {
  it('prints the kill run and the resume run byte for byte', () => {
    const dir = tempDir();
    const killed = runCli(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-effect-write:3' } });
    expect(killed.stdout).toBe(KILL_TRANSCRIPT);
    expect(killed.code).toBe(137);
    expect(killed.stderr).toBe('');

    const resumed = runCli(['demo', '--resume'], { cwd: dir });
    expect(resumed.stdout).toBe(RESUME_TRANSCRIPT);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toBe('');
    expect(fs.readFileSync(path.join(dir, 'report.txt'), 'utf8')).toContain('Highlights:');
    expect(auditLines(dir)).toHaveLength(1);
  });

  it('runs the demo uninterrupted in a fresh directory, creating the sample notes', () => {
    const dir = tempDir();
    const run = runCli(['demo'], { cwd: dir });
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual(DEMO_PLAIN_LINES);
    expect(fs.existsSync(path.join(dir, 'sales-notes.txt'))).toBe(true);
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'journal.jsonl'))).toBe(true);
  });

  it('honours --dir and leaves existing notes alone', () => {
    const cwd = tempDir();
    const dir = path.join(cwd, 'work');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'sales-notes.txt'), 'Only line\n- one point here\n');
    const run = runCli(['demo', '--dir', dir], { cwd });
    expect(run.code).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'sales-notes.txt'), 'utf8')).toBe('Only line\n- one point here\n');
    expect(fs.readFileSync(path.join(dir, 'report.txt'), 'utf8')).toContain('- one point here');
    expect(fs.existsSync(path.join(cwd, '.durable-agent'))).toBe(false);
  });
});

describe('the other reconcile branches, from the command line', () => {
  it('re-runs a read-only tool that has no ledger entry', () => {
    const dir = tempDir();
    expect(runCli(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-tool-return:1' } }).code).toBe(137);
    const resumed = runCli(['demo', '--resume'], { cwd: dir });
    expect(resumed.stdout).toContain(
      '[resume] read turn=1 pending=read_notes\n[resume][reconcile] tool_use_id=toolu_01 name=read_notes ledger miss, read-only tool, re-running\n[turn 1][save B] filled in this turn\'s tool result after resume\n',
    );
    expect(resumed.code).toBe(0);
  });

  it('reports an unknown side effect as is_error when the tool cannot verify (--no-verify)', () => {
    const dir = tempDir();
    expect(runCli(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-tool-return:3' } }).code).toBe(137);
    const resumed = runCli(['demo', '--resume', '--no-verify'], { cwd: dir });
    expect(resumed.stdout).toContain(
      '[resume][reconcile] tool_use_id=toolu_03 name=write_report ledger miss with side effects, unresolvable, appending is_error\n',
    );
    expect(resumed.stdout).toContain('[done] I could not confirm that report.txt was written');
    expect(resumed.code).toBe(0);
    // The report was written once, by the crashed process, and not again.
    expect(auditLines(dir)).toHaveLength(1);
  });

  it('uses verify to find that write_report had already written the report', () => {
    const dir = tempDir();
    expect(runCli(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-tool-return:3' } }).code).toBe(137);
    const resumed = runCli(['demo', '--resume'], { cwd: dir });
    expect(resumed.stdout).toContain(
      '[resume][reconcile] tool_use_id=toolu_03 name=write_report ledger miss with side effects, verified as done, not re-running\n',
    );
    expect(resumed.stdout).toContain('[done] Report written to report.txt, task complete.');
    expect(auditLines(dir)).toHaveLength(1);
  });

  it('uses verify to find that write_report had not run yet, and runs it once', () => {
    const dir = tempDir();
    expect(runCli(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-save-a:3' } }).code).toBe(137);
    expect(fs.existsSync(path.join(dir, 'report.txt'))).toBe(false);
    const resumed = runCli(['demo', '--resume'], { cwd: dir });
    expect(resumed.stdout).toContain(
      '[resume][reconcile] tool_use_id=toolu_03 name=write_report ledger miss with side effects, verified as not done, running it now\n',
    );
    expect(resumed.code).toBe(0);
    expect(auditLines(dir)).toHaveLength(1);
  });

  it('resumes a run that crashed at checkpoint B without any reconcile', () => {
    const dir = tempDir();
    expect(runCli(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-save-b:2' } }).code).toBe(137);
    const resumed = runCli(['demo', '--resume'], { cwd: dir });
    expect(resumed.stdout).toBe(
      '[resume] read turn=2 pending=none\n[turn 3][save A] pending=write_report\n[turn 3][save B]\n[done] Report written to report.txt, task complete.\n',
    );
  });

  it('dies by a real SIGKILL with CRASH_MODE=sigkill and resumes', () => {
    const dir = tempDir();
    const killed = runCli(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-effect-write:3', CRASH_MODE: 'sigkill' } });
    expect(killed.signal).toBe('SIGKILL');
    expect(killed.stdout).not.toContain('[kill]');
    // The killed process left its lock behind; the resume takes it over.
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'lock'))).toBe(true);
    const resumed = runCli(['demo', '--resume'], { cwd: dir });
    expect(resumed.stdout).toBe(RESUME_TRANSCRIPT);
  });
});

describe('crash points', () => {
  it('lists every label a full demo run passes, in order', () => {
    const dir = tempDir();
    const listed = runCli(['demo', '--list-crash-points'], { cwd: dir });
    expect(listed.code).toBe(0);
    const turn = (n: number) => [`after-model-reply:${n}`, `after-save-a:${n}`, `after-tool-return:${n}`, `after-effect-write:${n}`, `after-save-b:${n}`];
    expect(listed.stdout.trim().split('\n')).toEqual([
      'after-save-start:1',
      ...turn(1),
      ...turn(2),
      ...turn(3),
      'after-model-reply:4',
      'after-save-done:1',
    ]);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('refuses a CRASH_AFTER that names no crash point', () => {
    const dir = tempDir();
    const run = runCli(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-save-x:1' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('CRASH_AFTER=after-save-x:1 names no crash point');
  });
});

describe('refusals that protect the user’s run', () => {
  it('refuses to start over an unfinished run, and --fresh archives it instead of deleting it', () => {
    const dir = tempDir();
    expect(runCli(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-save-a:2' } }).code).toBe(137);
    const refused = runCli(['demo'], { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('An unfinished run is already stored');
    expect(refused.stderr).toContain('--resume');
    expect(refused.stderr).toContain('--fresh');

    const fresh = runCli(['demo', '--fresh'], { cwd: dir });
    expect(fresh.code).toBe(0);
    expect(fresh.stderr).toContain('the previous run was moved to');
    const archive = fs.readdirSync(path.join(dir, '.durable-agent', 'archive'));
    expect(archive).toHaveLength(1);
  });

  it('starts a new run over a finished one, archiving the finished one', () => {
    const dir = tempDir();
    expect(runCli(['demo'], { cwd: dir }).code).toBe(0);
    expect(runCli(['demo'], { cwd: dir }).code).toBe(0);
    expect(fs.readdirSync(path.join(dir, '.durable-agent', 'archive'))).toHaveLength(1);
  });

  it('refuses --resume where no run is stored', () => {
    const dir = tempDir();
    const run = runCli(['demo', '--resume'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('No run is stored at');
    expect(run.stderr).toContain('a resume needs one to pick up');
  });

  it('says how to start a run when status or history finds none, without talking of a resume', () => {
    const dir = tempDir();
    for (const command of ['status', 'history']) {
      const read = runCli([command], { cwd: dir });
      expect(read.code, command).toBe(2);
      expect(read.stderr).toContain('No run is stored at');
      expect(read.stderr).toContain('Start one with `durable-agent demo` or `durable-agent run`.');
      expect(read.stderr).not.toMatch(/resume/i);
    }
  });

  it('takes --accept-lost-record and --allow-tool-change only with --resume', () => {
    const dir = tempDir();
    for (const flag of ['--accept-lost-record', '--allow-tool-change']) {
      const refused = runCli(['demo', flag], { cwd: dir });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`${flag} only applies to --resume`);
    }
    expect(fs.existsSync(path.join(dir, '.durable-agent'))).toBe(false);
  });

  it('refuses a second process on a run another one is driving, naming the holder', async () => {
    const dir = tempDir();
    // Paced so that the first run is still going when the second process has started, even on a
    // loaded machine where a node process takes a second or two to start.
    const first = startCli(['demo', '--pace', '1500'], { cwd: dir });
    await vi.waitFor(() => expect(first.output()).toContain('[save A]'), { timeout: 20_000, interval: 20 });
    const second = runCli(['demo', '--resume'], { cwd: dir });
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`pid ${first.child.pid}`);
    expect(second.stderr).toContain('is being driven by another process');
    const finished = await first.done;
    expect(finished.code).toBe(0);
    expect(finished.stdout).toContain('[done]');
  });

  it('refuses bad arguments with exit code 2', () => {
    const dir = tempDir();
    expect(runCli(['demo', '--max-turns', 'many'], { cwd: dir }).code).toBe(2);
    expect(runCli(['demo', '--bogus'], { cwd: dir }).code).toBe(2);
    expect(runCli(['frobnicate'], { cwd: dir }).code).toBe(2);
    expect(runCli(['demo', '--resume', '--fresh'], { cwd: dir }).code).toBe(2);
  });

  it('says a real model needs ANTHROPIC_API_KEY before anything runs', () => {
    const dir = tempDir();
    const run = runCli(['demo', '--model', 'claude-sonnet-4-5'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('ANTHROPIC_API_KEY');
    expect(fs.existsSync(path.join(dir, '.durable-agent'))).toBe(false);
  });
});

describe('MAX_TURNS', () => {
  it('stops cleanly with exit code 5 and resumes with a larger --max-turns', () => {
    const dir = tempDir();
    const stopped = runCli(['demo', '--max-turns', '2'], { cwd: dir });
    expect(stopped.code).toBe(5);
    expect(stopped.stdout).toContain('[stop] reached MAX_TURNS=2 at turn 2');
    expect(fs.existsSync(path.join(dir, 'report.txt'))).toBe(false);

    const again = runCli(['demo', '--resume'], { cwd: dir });
    expect(again.code).toBe(5);

    const resumed = runCli(['demo', '--resume', '--max-turns', '5'], { cwd: dir });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('[turn 3][save A] pending=write_report');
    expect(resumed.stdout).toContain('[done] Report written to report.txt, task complete.');
    expect(auditLines(dir)).toHaveLength(1);
  });
});

describe('damaged stores, from the command line', () => {
  it('refuses a journal with a changed byte before its last record, and changes nothing', () => {
    const dir = tempDir();
    expect(runCli(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-save-b:2' } }).code).toBe(137);
    const journal = path.join(dir, '.durable-agent', 'journal.jsonl');
    const bytes = fs.readFileSync(journal);
    const thirdLine = bytes.indexOf(0x0a, bytes.indexOf(0x0a) + 1) + 1; // record 0, after the header and the commit mark
    bytes[thirdLine + 40] = bytes[thirdLine + 40]! ^ 0x01;
    fs.writeFileSync(journal, bytes);
    const run = runCli(['demo', '--resume'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('is damaged at line 3');
    expect(run.stderr).toContain('checksum mismatch');
    expect(run.stderr).toContain('--fresh');
    expect(fs.readFileSync(journal)).toEqual(bytes);
  });

  it('recovers from a record cut off by a crash and says so', () => {
    const dir = tempDir();
    expect(runCli(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-save-b:2' } }).code).toBe(137);
    const journal = path.join(dir, '.durable-agent', 'journal.jsonl');
    fs.appendFileSync(journal, '1a2b3c4d {"seq":7,"at":17960');
    const run = runCli(['demo', '--resume'], { cwd: dir });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("the journal's last record was cut off by a crash");
    expect(run.stdout).toContain('[resume] read turn=2 pending=none');
  });

  it('refuses a journal of another version, naming both versions', () => {
    const dir = tempDir();
    expect(runCli(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-save-b:1' } }).code).toBe(137);
    const journal = path.join(dir, '.durable-agent', 'journal.jsonl');
    const lines = fs.readFileSync(journal, 'utf8').split('\n');
    const header = JSON.parse(lines[0]!.slice(9));
    // Version 5 is a sealed run; the next one is what this release cannot read.
    header.version = 6;
    const json = JSON.stringify(header);
    lines[0] = `${crc32(json).toString(16).padStart(8, '0')} ${json}`;
    fs.writeFileSync(journal, lines.join('\n'));
    const run = runCli(['demo', '--resume'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('has version 6; this durable-agent reads version 1, 2, 3, 4 or 5 only');
  });
});

describe('a failed ledger write', () => {
  it('alerts loudly, still returns the real result, and finishes', () => {
    const dir = tempDir();
    const run = runCli(['demo'], { cwd: dir, env: { DURABLE_AGENT_FAIL_WRITE: 'effect-write:3' } });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('[ALERT] ledger write failed for tool_use_id=toolu_03 (write_report)');
    expect(run.stdout).toContain('[done] Report written to report.txt, task complete.');
    expect(auditLines(dir)).toHaveLength(1);
    const status = runCli(['status', '--json'], { cwd: dir });
    expect(JSON.parse(status.stdout)).toMatchObject({ state: 'done', ledgerEntries: 2 });
  });

  it('stops with exit code 4 and a resumable store when checkpoint B cannot be written', () => {
    const dir = tempDir();
    const run = runCli(['demo'], { cwd: dir, env: { DURABLE_AGENT_FAIL_WRITE: 'save-b:2' } });
    expect(run.code).toBe(4);
    expect(run.stderr).toContain('Could not save checkpoint B');
    expect(run.stderr).toContain('ENOSPC');
    const resumed = runCli(['demo', '--resume'], { cwd: dir });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('[resume] read turn=2 pending=count_words');
    expect(resumed.stdout).toContain('tool_use_id=toolu_02 name=count_words ledger hit, reusing result, not re-running');
  });
});

describe('status and history', () => {
  it('shows where a crashed run stands', () => {
    const dir = tempDir();
    expect(runCli(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-effect-write:3' } }).code).toBe(137);
    const plain = runCli(['status'], { cwd: dir });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/state\s+effectRecorded/);
    expect(plain.stdout).toMatch(/pending\s+toolu_03 write_report \(recorded in the ledger\)/);
    const status = JSON.parse(runCli(['status', '--json'], { cwd: dir }).stdout);
    expect(status).toMatchObject({
      state: 'effectRecorded',
      turn: 3,
      pending: [{ id: 'toolu_03', name: 'write_report', recorded: true }],
      ledgerEntries: 3,
      lastSave: { point: 'effect-write', seq: 11 },
    });
    expect(status.usage.input).toBeGreaterThan(0);
    const history = JSON.parse(runCli(['history', '--json'], { cwd: dir }).stdout);
    const turn = ['model-reply', 'save-a', 'effect-write'];
    expect(history.map((step: { point: string }) => step.point)).toEqual([
      'save-start', ...turn, 'save-b', ...turn, 'save-b', ...turn,
    ]);
  });

  it('numbers the records alike on the last save and the journal lines', () => {
    const dir = tempDir();
    expect(runCli(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-effect-write:3' } }).code).toBe(137);
    const plain = runCli(['status'], { cwd: dir }).stdout;
    expect(plain).toMatch(/last save\s+effect-write \(record 11\)/);
    expect(plain).toMatch(/journal\s+12 records \(records 0 to 11\), /);
  });

  it('lists the fleet when DURABLE_AGENT_DATABASE_URL is set and no --dir is given; --dir means the run there', () => {
    const dir = tempDir();
    expect(runCli(['demo'], { cwd: dir }).code).toBe(0);
    const env = { DURABLE_AGENT_DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/none' };
    const fleet = runCli(['status'], { cwd: dir, env });
    expect(fleet.code).toBe(4);
    expect(fleet.stderr).toContain('cannot reach the database');
    const file = runCli(['status', '--dir', '.'], { cwd: dir, env });
    expect(file.code).toBe(0);
    expect(file.stdout).toMatch(/state\s+done/);
    const both = runCli(['status', '--dir', '.', '--database-url', env.DURABLE_AGENT_DATABASE_URL], { cwd: dir });
    expect(both.code).toBe(2);
  });

  it('says clearly when there is no run', () => {
    const dir = tempDir();
    const run = runCli(['status'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('No run is stored at');
  });
});

describe('the command line refuses what it cannot honour, before anything is written', () => {
  const nothingWritten = (dir: string) => expect(fs.readdirSync(dir)).toEqual([]);

  it('refuses `--dir --plain` instead of creating a directory named --plain', () => {
    const dir = tempDir();
    const run = runCli(['demo', '--dir', '--plain'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--dir needs a value, but the next word is "--plain"');
    nothingWritten(dir);
  });

  it('refuses a repeated option', () => {
    const dir = tempDir();
    const run = runCli(['demo', '--max-turns', '3', '--max-turns', '4'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--max-turns is given twice');
    nothingWritten(dir);
  });

  it('refuses numbers out of range with the range: 400 nines for --max-turns, --timeout 0, --pace 99999999999', () => {
    const dir = tempDir();
    const nines = runCli(['demo', '--max-turns', '9'.repeat(400)], { cwd: dir });
    expect(nines.code).toBe(2);
    expect(nines.stderr).toContain('--max-turns takes a whole number from 1 to 100000');
    const timeout = runCli(['demo', '--timeout', '0'], { cwd: dir });
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain('--timeout takes a duration from 1s to 1h: a whole number and ms, s, m, h or d (500ms, 90s, 15m, 2h, 3d), not "0"');
    const pace = runCli(['demo', '--pace', '99999999999'], { cwd: dir });
    expect(pace.code).toBe(2);
    expect(pace.stderr).toContain('--pace takes a duration from 0s to 10m');
    nothingWritten(dir);
  });

  it.each(['garbage', 'effect-wrte:3', 'effect-write:0', 'effect-write:3,save-b'])('refuses DURABLE_AGENT_FAIL_WRITE=%s with what is allowed (exit 2)', (spec) => {
    const dir = tempDir();
    const run = runCli(['demo'], { cwd: dir, env: { DURABLE_AGENT_FAIL_WRITE: spec } });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/DURABLE_AGENT_FAIL_WRITE=\S+ names no write\. Use <point>:<n> with n ≥ 1 and <point> one of: save-start, model-reply, save-a, save-waiting, save-decision, effect-write/);
    nothingWritten(dir);
  });

  it('refuses a CRASH_MODE that is not a crash mode (exit 2)', () => {
    const dir = tempDir();
    const run = runCli(['demo'], { cwd: dir, env: { CRASH_AFTER: 'after-save-a:1', CRASH_MODE: 'bogus' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('CRASH_MODE=bogus is not a crash mode: use "exit"');
    nothingWritten(dir);
  });

  it('tells `run` without a key to set the key, not to drop --model', () => {
    const dir = tempDir();
    const run = runCli(['run', '--model', 'claude-sonnet-4-5', '--task', 'Say hi.'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('needs ANTHROPIC_API_KEY');
    expect(run.stderr).not.toContain('Without --model');
    expect(run.stderr).toContain('Set the key and run the same command again');
    nothingWritten(dir);
  });
});

describe('help and version, from the command line', () => {
  it('prints a command\'s own usage, every option and an example for `<command> --help`', () => {
    for (const command of COMMANDS) {
      const run = runCli([command.name, '--help'], { cwd: tempDir() });
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^Usage: durable-agent ${command.name}\\b`));
      for (const option of command.options) expect(run.stdout).toContain(`--${flagOf(option)}`);
      expect(run.stdout).toMatch(/Examples?:\n {2}/);
    }
  });

  it('prints the list of commands for -h, and the version of package.json for -v and --version', () => {
    const help = runCli(['-h'], { cwd: tempDir() });
    expect(help.code).toBe(0);
    for (const command of COMMANDS) expect(help.stdout).toContain(`  ${command.name}`);
    const { version } = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
    for (const flag of ['-v', '--version']) expect(runCli([flag], { cwd: tempDir() }).stdout).toBe(`durable-agent ${version}\n`);
  });
});

describe('the resume command it prints', () => {
  /** A PATH with an executable `durable-agent` that runs this checkout's CLI. */
  function pathWithBin(): string {
    const bin = tempDir();
    fs.writeFileSync(path.join(bin, 'durable-agent'), `#!/bin/sh\nexec ${shellQuote(process.execPath)} ${shellQuote(BIN)} "$@"\n`, { mode: 0o755 });
    return `${bin}${path.delimiter}${process.env.PATH}`;
  }

  async function interruptedHint(dir: string, env: Record<string, string | undefined>): Promise<string> {
    const run = startCli(['demo', '--dir', dir, '--pace', '500'], { cwd: tempDir(), env });
    await vi.waitFor(() => expect(run.output()).toContain('[save A]'), { timeout: 20_000, interval: 20 });
    run.child.kill('SIGINT');
    const stopped = await run.done;
    expect(stopped.code).toBe(130);
    const hint = /Resume it with: (.*)\n/.exec(stopped.stderr)?.[1];
    expect(hint, stopped.stderr).toBeDefined();
    return hint!;
  }

  it('pasted into a POSIX shell, resumes exactly that directory and expands nothing', async () => {
    const parent = tempDir();
    const dir = path.join(parent, `y$(touch pwned) "x" 'q'`);
    const env = { PATH: pathWithBin(), npm_command: undefined };
    const hint = await interruptedHint(dir, env);
    expect(hint.startsWith('durable-agent demo --resume --dir ')).toBe(true);
    const shellCwd = tempDir();
    const resumed = spawnSync('sh', ['-c', hint], { cwd: shellCwd, env: { ...process.env, ...env, npm_command: '' }, encoding: 'utf8', timeout: 60_000 });
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('[resume] read turn=1');
    expect(resumed.stdout).toContain('[done] Report written to report.txt, task complete.');
    expect(fs.readFileSync(path.join(dir, 'report.txt'), 'utf8')).toContain('Highlights:');
    expect(fs.readdirSync(shellCwd)).toEqual([]); // nothing expanded: no file named pwned
    expect(fs.readdirSync(parent)).toEqual([path.basename(dir)]);
  });

  it('says `npx --no-install durable-agent` where the command is not on PATH', async () => {
    const dir = tempDir();
    const hint = await interruptedHint(dir, { PATH: path.dirname(process.execPath), npm_command: undefined });
    expect(hint).toBe(`npx --no-install durable-agent demo --resume --dir ${shellQuote(dir)}`);
  });
});

