/**
 * Sealed runs on the command line, with real processes and real files: a run started with a key
 * leaves none of its content in the state folder; list and status read it without the key, its
 * transcript and a resume need the key and name it; a SIGKILL after a side effect and a resume
 * with the key run the effect once; a rotation killed mid-way and run again leaves every run
 * readable with the new key; a shredded run stays unreadable and the others intact; a run
 * started plain stays plain.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_CODE_OF_KIND } from '../../src/util/durable-agent-error.ts';
import { type CliRun, runCliAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { folderText } from '../helpers/folder-text.ts';

const newKey = () => randomBytes(32).toString('base64');
const K1 = `k1:${newKey()}`;
const K2 = `k2:${newKey()}`;
const REFUSED = EXIT_CODE_OF_KIND.refused;

/** Words of the demo's content: its task, what its tools read and were given, what they returned. */
const SECRETS = ['sales-notes.txt', 'North region closed 14 new accounts', 'Counting the words', '57 words', 'Sales report: Q3'];
const REASON = 'the board must not read this draft';

function cli(args: string[], cwd: string, env: Record<string, string | undefined> = {}): Promise<CliRun> {
  return runCliAsync(args, { cwd, env: { DURABLE_AGENT_KEYS: undefined, DURABLE_AGENT_KEY_FILE: undefined, ...env } });
}

/** Every file under the state folder: its name and its bytes, read as text. */
function stateText(dir: string): string {
  return folderText(path.join(dir, '.durable-agent'));
}

function auditLines(dir: string): string[] {
  const file = path.join(dir, 'report-audit.log');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : [];
}

describe('a run started with a key', () => {
  it('keeps none of its content readable; list and status work without the key; the transcript and a resume need it and name it', async () => {
    const dir = tempDir();
    const started = await cli(['demo', '--require-approval', 'write_report', '--no-wait'], dir, { DURABLE_AGENT_KEYS: K1 });
    expect(started.code, started.stderr).toBe(7);
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'run-key.json'))).toBe(true);
    const header = JSON.parse(fs.readFileSync(path.join(dir, '.durable-agent', 'journal.jsonl'), 'utf8').split('\n')[0]!.slice(9));
    expect(header).toMatchObject({ version: 5, sealed: expect.stringMatching(/^rk-/) });
    for (const secret of SECRETS) expect(stateText(dir)).not.toContain(secret);

    const status = await cli(['status'], dir);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/state\s+awaitingDecision/);
    expect(status.stdout).toMatch(/turn\s+3 of 20/);
    expect(status.stdout).toMatch(/waiting\s+toolu_03 write_report: approval/);
    expect(status.stdout).toMatch(/task\s+\(sealed with the run key rk-/);
    expect(status.stdout).not.toContain('sealed:1:');
    const list = await cli(['list'], dir);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(header.runId);
    expect(list.stdout).toContain('awaitingDecision');
    expect(list.stdout).toContain('(sealed)');
    const listed = await cli(['list', '--json'], dir);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).not.toContain('sealed:1:');
    expect(JSON.parse(listed.stdout)[0].task).toMatch(/^\(sealed with the run key rk-[0-9a-f]+: give the master key to read it\)$/);

    const unkeyed = await cli(['history', '--transcript'], dir);
    expect(unkeyed.code).toBe(REFUSED);
    expect(unkeyed.stdout).toBe('');
    expect(unkeyed.stderr).toContain('needs the master key "k1"');
    const wrongKey = await cli(['history', '--transcript'], dir, { DURABLE_AGENT_KEYS: K2 });
    expect(wrongKey.code).toBe(REFUSED);
    expect(wrongKey.stderr).toContain('needs the master key "k1"');
    const keyed = await cli(['history', '--transcript'], dir, { DURABLE_AGENT_KEYS: K1 });
    expect(keyed.code, keyed.stderr).toBe(0);
    expect(keyed.stdout).toContain('user       Turn sales-notes.txt into a short report and write it to report.txt.');
    expect(keyed.stdout).toContain('result     count_words toolu_02: 57 words');

    // A reason is the run's content: without the key it is refused, naming the key, and nothing is written.
    const deniedUnkeyed = await cli(['deny', 'toolu_03', '--reason', REASON], dir);
    expect(deniedUnkeyed.code).toBe(REFUSED);
    expect(deniedUnkeyed.stderr).toContain('needs the master key "k1"');
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'decisions', 'toolu_03.json'))).toBe(false);
    const denied = await cli(['deny', 'toolu_03', '--reason', REASON], dir, { DURABLE_AGENT_KEYS: K1 });
    expect(denied.code, denied.stderr).toBe(0);
    // It waits in the inbox sealed; `pending` without the key says it is given, and shows no reason.
    expect(fs.readFileSync(path.join(dir, '.durable-agent', 'decisions', 'toolu_03.json'), 'utf8')).toContain('"sealed":"rk-');
    expect(stateText(dir)).not.toContain(REASON);
    const pending = await cli(['pending'], dir);
    expect(pending.code, pending.stderr).toBe(0);
    expect(pending.stdout).toContain('denied by');
    expect(pending.stdout).not.toContain('sealed:1:');
    const resumedUnkeyed = await cli(['demo', '--resume'], dir);
    expect(resumedUnkeyed.code).toBe(REFUSED);
    expect(resumedUnkeyed.stderr).toContain('needs the master key "k1"');
    const resumed = await cli(['demo', '--resume'], dir, { DURABLE_AGENT_KEYS: `${K1}` });
    expect(resumed.code, resumed.stderr).toBe(0);
    // The decision's reason was sealed in the inbox until the run recorded it: now it is sealed in the journal only.
    const text = stateText(dir);
    for (const secret of [...SECRETS, REASON]) expect(text).not.toContain(secret);
    const transcript = await cli(['history', '--transcript', '--full'], dir, { DURABLE_AGENT_KEYS: K1 });
    expect(transcript.code, transcript.stderr).toBe(0);
    expect(transcript.stdout).toContain(REASON);
  });

  it('killed by SIGKILL after its side effect, resumed with the key: the ledger entry is reused, the effect happened once', async () => {
    const dir = tempDir();
    const killed = await cli(['demo'], dir, { DURABLE_AGENT_KEYS: K1, CRASH_AFTER: 'after-effect-write:3', CRASH_MODE: 'sigkill' });
    expect(killed.signal).toBe('SIGKILL');
    expect(auditLines(dir)).toHaveLength(1);
    for (const secret of SECRETS) expect(stateText(dir)).not.toContain(secret);
    const refused = await cli(['demo', '--resume'], dir);
    expect(refused.code).toBe(REFUSED);
    const resumed = await cli(['demo', '--resume'], dir, { DURABLE_AGENT_KEYS: K1 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('toolu_03 name=write_report ledger hit, reusing result, not re-running');
    expect(auditLines(dir)).toHaveLength(1);
    for (const secret of SECRETS) expect(stateText(dir)).not.toContain(secret);
  });
});

describe('the key file', () => {
  it('seals and opens as the variable does when its owner alone reads it; a wider one, or both given, is refused', async () => {
    const dir = tempDir();
    const keyFile = path.join(tempDir(), 'keys');
    fs.writeFileSync(keyFile, `# the first key seals\n${K2}\n${K1}\n`, { mode: 0o600 });
    const started = await cli(['demo', '--require-approval', 'write_report', '--no-wait'], dir, { DURABLE_AGENT_KEY_FILE: keyFile });
    expect(started.code, started.stderr).toBe(7);
    expect(JSON.parse(fs.readFileSync(path.join(dir, '.durable-agent', 'run-key.json'), 'utf8')).master).toBe('k2');
    const read = await cli(['history', '--transcript'], dir, { DURABLE_AGENT_KEY_FILE: keyFile });
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout).toContain('Turn sales-notes.txt');
    fs.chmodSync(keyFile, 0o644);
    const open = await cli(['history', '--transcript'], dir, { DURABLE_AGENT_KEY_FILE: keyFile });
    expect(open.code).toBe(REFUSED);
    expect(open.stderr).toContain(`chmod 600 ${keyFile}`);
    expect(open.stderr).not.toContain(K1.slice(3));
    fs.chmodSync(keyFile, 0o600);
    const both = await cli(['history', '--transcript'], dir, { DURABLE_AGENT_KEY_FILE: keyFile, DURABLE_AGENT_KEYS: K2 });
    expect(both.code).toBe(REFUSED);
    expect(both.stderr).toContain('both are set');
  });
});

describe('a fork of a sealed run on the command line', () => {
  it('is refused without the key, nothing written; with the ring it is sealed under the first key, a run key of its own', async () => {
    const dir = tempDir();
    const started = await cli(['demo'], dir, { DURABLE_AGENT_KEYS: K1 });
    expect(started.code, started.stderr).toBe(0);
    const to = path.join(tempDir(), 'fork');
    const refused = await cli(['fork', '--at', '3', '--to', to], dir);
    expect(refused.code).toBe(REFUSED);
    expect(refused.stderr).toContain('needs the master key "k1"');
    expect(fs.existsSync(path.join(to, '.durable-agent', 'journal.jsonl'))).toBe(false);

    // k2 is the first key now: the fork is sealed under it, the parent opened with k1.
    const forked = await cli(['fork', '--at', '3', '--to', to], dir, { DURABLE_AGENT_KEYS: `${K2},${K1}` });
    expect(forked.code, forked.stderr).toBe(0);
    const childKey = JSON.parse(fs.readFileSync(path.join(to, '.durable-agent', 'run-key.json'), 'utf8'));
    const parentKey = JSON.parse(fs.readFileSync(path.join(dir, '.durable-agent', 'run-key.json'), 'utf8'));
    expect(childKey.master).toBe('k2');
    expect(childKey.key).not.toBe(parentKey.key);
    for (const secret of SECRETS) expect(stateText(to)).not.toContain(secret);
    const read = await cli(['history', '--transcript'], to, { DURABLE_AGENT_KEYS: K2 });
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout).toContain('Turn sales-notes.txt');
    const withOldKeyOnly = await cli(['history', '--transcript'], to, { DURABLE_AGENT_KEYS: K1 });
    expect(withOldKeyOnly.code).toBe(REFUSED);
    expect(withOldKeyOnly.stderr).toContain('needs the master key "k2"');
  });
});

describe('a run started plain', () => {
  it('stays plain when it is resumed with keys, and reads without them', async () => {
    const dir = tempDir();
    const killed = await cli(['demo'], dir, { CRASH_AFTER: 'after-effect-write:3', CRASH_MODE: 'sigkill' });
    expect(killed.signal).toBe('SIGKILL');
    const resumed = await cli(['demo', '--resume'], dir, { DURABLE_AGENT_KEYS: K1 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'run-key.json'))).toBe(false);
    expect(stateText(dir)).toContain('North region closed 14 new accounts');
    expect(stateText(dir)).not.toContain('sealed:1:');
    const transcript = await cli(['history', '--transcript'], dir);
    expect(transcript.code, transcript.stderr).toBe(0);
    expect(transcript.stdout).toContain('Turn sales-notes.txt');
  });
});

describe('keys rotate and prune --shred over a folder of runs', () => {
  const RUNS = ['alpha', 'beta', 'gamma'];

  async function sealedRuns(dir: string): Promise<void> {
    for (const run of RUNS) {
      const started = await cli(['demo', '--run', run], dir, { DURABLE_AGENT_KEYS: K1 });
      expect(started.code, started.stderr).toBe(0);
    }
  }

  const transcriptOf = (dir: string, run: string, keys: string | undefined) => cli(['history', '--transcript', '--run', run], dir, { DURABLE_AGENT_KEYS: keys });
  const masterOf = (dir: string, run: string) => JSON.parse(fs.readFileSync(path.join(dir, '.durable-agent', 'runs', run, 'run-key.json'), 'utf8')).master;

  it('a rotation from k1 to k2 killed mid-way and run again: every run reads with k2 (k1 kept), then with k2 alone', async () => {
    const dir = tempDir();
    await sealedRuns(dir);
    const killed = await cli(['keys', 'rotate'], dir, { DURABLE_AGENT_KEYS: `${K2},${K1}`, CRASH_AFTER: 'after-rewrap:1' });
    expect(killed.signal).toBe('SIGKILL');
    expect(RUNS.map((run) => masterOf(dir, run)).sort()).toEqual(['k1', 'k1', 'k2']);
    // Killed mid-way, every run still reads with the keys given.
    for (const run of RUNS) expect((await transcriptOf(dir, run, `${K2},${K1}`)).code).toBe(0);
    const again = await cli(['keys', 'rotate'], dir, { DURABLE_AGENT_KEYS: `${K2},${K1}` });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('2 run keys rewrapped under k2, 1 already were, 0 could not be');
    expect(RUNS.map((run) => masterOf(dir, run))).toEqual(['k2', 'k2', 'k2']);
    for (const run of RUNS) {
      const read = await transcriptOf(dir, run, K2);
      expect(read.code, read.stderr).toBe(0);
      expect(read.stdout).toContain('Turn sales-notes.txt');
    }
    const oldKeyOnly = await transcriptOf(dir, 'alpha', K1);
    expect(oldKeyOnly.code).toBe(REFUSED);
    expect(oldKeyOnly.stderr).toContain('needs the master key "k2"');
  });

  it('a shredded run is unreadable with every key; the others read, and list and status still show it', async () => {
    const dir = tempDir();
    await sealedRuns(dir);
    const plainDir = path.join(dir, 'plain');
    const refusedPlain = await cli(['demo', '--dir', plainDir], dir);
    expect(refusedPlain.code).toBe(0);
    const notSealed = await cli(['prune', '--dir', plainDir, '--shred', '--run', JSON.parse(fs.readFileSync(path.join(plainDir, '.durable-agent', 'journal.jsonl'), 'utf8').split('\n')[0]!.slice(9)).runId], dir);
    expect(notSealed.code).toBe(REFUSED);
    expect(notSealed.stderr).toContain('is not sealed');

    const shred = await cli(['prune', '--shred', '--run', 'beta'], dir);
    expect(shred.code, shred.stderr).toBe(0);
    expect(shred.stdout).toContain('shredded run beta');
    const shredded = await transcriptOf(dir, 'beta', K1);
    expect(shredded.code).toBe(REFUSED);
    expect(shredded.stderr).toContain('is gone (a shredded run)');
    const resumed = await cli(['demo', '--run', 'beta', '--resume'], dir, { DURABLE_AGENT_KEYS: K1 });
    expect(resumed.code).not.toBe(0);
    for (const run of ['alpha', 'gamma']) expect((await transcriptOf(dir, run, K1)).code).toBe(0);
    const status = await cli(['status', '--run', 'beta'], dir, { DURABLE_AGENT_KEYS: K1 });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/state\s+done/);
    const list = await cli(['list'], dir);
    expect(list.code, list.stderr).toBe(0);
    for (const run of RUNS) expect(list.stdout).toContain(run);
    const twice = await cli(['prune', '--shred', '--run', 'beta'], dir);
    expect(twice.code).toBe(REFUSED);
  });
});
