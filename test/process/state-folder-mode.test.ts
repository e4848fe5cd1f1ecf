/**
 * The state folder is the run's own: made 0700 with its files 0600 whatever the umask (under
 * `umask 000` too), and a state folder every user may write to is refused before anything is read.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { BIN, cliEnv, runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const modeOf = (file: string) => (fs.statSync(file).mode & 0o777).toString(8);

it('under umask 000: the state folder and its folders 0700, the journal and a decision 0600', () => {
  const dir = tempDir('da-mode-');
  const cli = (args: string) => spawnSync('sh', ['-c', `umask 000; exec "${process.execPath}" "${BIN}" ${args}`], { cwd: dir, env: cliEnv(), encoding: 'utf8' });
  expect(cli('demo --require-approval write_report --no-wait').status).toBe(7);
  expect(cli('approve toolu_03').status).toBe(0);
  const state = path.join(dir, '.durable-agent');
  expect(modeOf(state)).toBe('700');
  expect(modeOf(path.join(state, 'journal.jsonl'))).toBe('600');
  expect(modeOf(path.join(state, 'decisions'))).toBe('700');
  expect(modeOf(path.join(state, 'decisions', 'toolu_03.json'))).toBe('600');
  // Every file and folder in it (the control inbox is the decisions' kind of inbox: the same code makes it).
  for (const name of fs.readdirSync(state, { recursive: true }) as string[]) {
    const file = path.join(state, name);
    expect(fs.statSync(file).mode & 0o077, `${name} is ${modeOf(file)}`).toBe(0);
  }
});

it('a state folder every user may write to is refused (exit 2) before anything is read; made private, the run goes on', () => {
  const dir = tempDir('da-mode-');
  expect(runCli(['demo', '--require-approval', 'write_report', '--no-wait'], { cwd: dir }).code).toBe(7);
  const state = path.join(dir, '.durable-agent');
  fs.chmodSync(state, 0o777);
  for (const args of [['status'], ['pending'], ['demo', '--resume', '--no-wait']]) {
    const run = runCli(args, { cwd: dir });
    expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
    expect(run.stderr).toContain(`${state} can be written by every user of this machine (mode 0777)`);
  }
  fs.chmodSync(state, 0o700);
  expect(runCli(['status'], { cwd: dir }).code).toBe(0);
});
