/**
 * keys rotate --seal-plain with real processes and real files: the plain runs of a folder are
 * sealed in (nothing of their content left readable in the state folder, each reads and resumes
 * with the keys), a run a live process drives is left plain and reported, a rotation SIGKILLed at
 * each point of a run's rewrite leaves every run readable (plain or sealed, never half) and a
 * second one finishes, and a run never rotated in stays plain.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { SEAL_IN_POINTS } from '../../src/store/seal-plain-runs.ts';
import { EXIT_CODE_OF_KIND } from '../../src/util/durable-agent-error.ts';
import { type CliRun, runCliAsync, startCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { folderText } from '../helpers/folder-text.ts';

const newKey = () => randomBytes(32).toString('base64');
const K1 = `k1:${newKey()}`;
const K2 = `k2:${newKey()}`;
const REFUSED = EXIT_CODE_OF_KIND.refused;

/** Words of the demo's content (its task, what its tools read and returned) and of a person's note. */
const SECRETS = ['sales-notes.txt', 'North region closed 14 new accounts', 'Counting the words', 'Sales report: Q3'];
const NOTE = 'the board must not read this draft';

function cli(args: string[], cwd: string, env: Record<string, string | undefined> = {}): Promise<CliRun> {
  return runCliAsync(args, { cwd, env: { DURABLE_AGENT_KEYS: undefined, DURABLE_AGENT_KEY_FILE: undefined, ...env } });
}

/** Every file under the state folder: its name and its bytes, read as text. */
function stateText(dir: string): string {
  return folderText(path.join(dir, '.durable-agent'));
}

const journalOf = (dir: string, run: string | null) => path.join(dir, '.durable-agent', ...(run === null ? [] : ['runs', run]), 'journal.jsonl');
const headerOf = (dir: string, run: string | null) => JSON.parse(fs.readFileSync(journalOf(dir, run), 'utf8').split('\n')[0]!.slice(9));
/** Whether every record line of the journal is sealed, or none (a half is never left). */
function sealedRecords(dir: string, run: string | null): 'all' | 'none' | 'some' {
  const marks = fs.readFileSync(journalOf(dir, run), 'utf8').split('\n').slice(2).filter(Boolean).map((line) => 'sealed' in JSON.parse(line.slice(9)));
  return marks.every(Boolean) ? 'all' : marks.some(Boolean) ? 'some' : 'none';
}

const runArgs = (run: string | null) => (run === null ? [] : ['--run', run]);

/** The folder's own run waiting for a decision, its approval (with a note) in the inbox, and two finished runs by id: all plain. */
async function plainFolder(): Promise<string> {
  const dir = tempDir('da-seal-plain-');
  const waiting = await cli(['demo', '--require-approval', 'write_report', '--no-wait'], dir);
  expect(waiting.code, waiting.stderr).toBe(7);
  const approved = await cli(['approve', 'toolu_03', '--note', NOTE], dir);
  expect(approved.code, approved.stderr).toBe(0);
  for (const run of ['alpha', 'beta']) {
    const done = await cli(['demo', '--run', run], dir);
    expect(done.code, done.stderr).toBe(0);
  }
  expect(stateText(dir)).toContain(NOTE);
  return dir;
}

const RUNS = [null, 'alpha', 'beta'];

async function expectReadable(dir: string, keys: string): Promise<void> {
  for (const run of RUNS) {
    const read = await cli(['history', '--transcript', ...runArgs(run)], dir, { DURABLE_AGENT_KEYS: keys });
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout).toContain('Turn sales-notes.txt');
  }
}

describe('keys rotate --seal-plain', () => {
  it('seals every plain run of the folder: nothing readable is left, each reads with the keys, and the waiting one resumes with its note', async () => {
    const dir = await plainFolder();
    // Without --seal-plain a rotation leaves plain runs plain.
    const rotated = await cli(['keys', 'rotate'], dir, { DURABLE_AGENT_KEYS: K1 });
    expect(rotated.code, rotated.stderr).toBe(0);
    for (const run of RUNS) expect(headerOf(dir, run).sealed).toBeUndefined();

    const sealed = await cli(['keys', 'rotate', '--seal-plain'], dir, { DURABLE_AGENT_KEYS: `${K2},${K1}` });
    expect(sealed.code, sealed.stderr).toBe(0);
    expect(sealed.stdout).toContain('3 plain runs sealed under k2, 0 finished, 0 in use left for later, 0 could not be');
    for (const run of RUNS) expect(headerOf(dir, run)).toMatchObject({ version: 5, sealed: expect.stringMatching(/^rk-/) });
    const text = stateText(dir);
    for (const secret of [...SECRETS, NOTE]) expect(text).not.toContain(secret);

    await expectReadable(dir, K2);
    const unkeyed = await cli(['history', '--transcript', '--run', 'alpha'], dir);
    expect(unkeyed.code).toBe(REFUSED);
    expect(unkeyed.stderr).toContain('needs the master key "k2"');
    const status = await cli(['status'], dir);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/state\s+awaitingDecision/);

    const resumed = await cli(['demo', '--resume'], dir, { DURABLE_AGENT_KEYS: K2 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(`(${NOTE})`);
    for (const secret of [...SECRETS, NOTE]) expect(stateText(dir)).not.toContain(secret);

    const again = await cli(['keys', 'rotate', '--seal-plain'], dir, { DURABLE_AGENT_KEYS: K2 });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('0 plain runs sealed under k2, 0 finished');
  });

  it('takes over a lock left by another host once its heartbeat is older than DURABLE_AGENT_LOCK_LEASE_MS, and not before', async () => {
    const dir = tempDir('da-seal-plain-lease-');
    const done = await cli(['demo'], dir);
    expect(done.code, done.stderr).toBe(0);
    // A process on a host that was re-created left its lock; its last heartbeat was 10 s ago (three
    // of its 2 s heartbeats missed: past the shortest a lease may be taken over at).
    const lock = path.join(dir, '.durable-agent', 'lock');
    fs.writeFileSync(lock, JSON.stringify({ pid: 4242, host: 'a-host-that-was-recreated', processStart: null, since: '2026-01-01T00:00:00.000Z', command: 'durable-agent demo', heartbeatMs: 2000, token: 'x' }));
    const then = new Date(Date.now() - 10_000);
    fs.utimesSync(lock, then, then);

    // The default lease (30 s) has not run out: the run is left plain.
    const held = await cli(['keys', 'rotate', '--seal-plain'], dir, { DURABLE_AGENT_KEYS: K1 });
    expect(held.code).toBe(REFUSED);
    expect(held.stdout).toContain(`left plain ${journalOf(dir, null)}`);
    expect(sealedRecords(dir, null)).toBe('none');

    const bad = await cli(['keys', 'rotate', '--seal-plain'], dir, { DURABLE_AGENT_KEYS: K1, DURABLE_AGENT_LOCK_LEASE_MS: 'soon' });
    expect(bad.code).toBe(REFUSED);
    expect(bad.stderr).toContain('DURABLE_AGENT_LOCK_LEASE_MS=soon is not a lease');

    const sealed = await cli(['keys', 'rotate', '--seal-plain'], dir, { DURABLE_AGENT_KEYS: K1, DURABLE_AGENT_LOCK_LEASE_MS: '1000' });
    expect(sealed.code, `${sealed.stdout}${sealed.stderr}`).toBe(0);
    expect(sealed.stdout).toContain('1 plain run sealed under k1');
    expect(sealedRecords(dir, null)).toBe('all');
  });

  it('leaves a run a live process drives plain and says so; a rotation after it stopped seals it', async () => {
    const dir = tempDir('da-seal-plain-held-');
    const waiting = startCli(['demo', '--require-approval', 'write_report', '--wait'], { cwd: dir, env: { DURABLE_AGENT_KEYS: undefined, DURABLE_AGENT_KEY_FILE: undefined } });
    await vi.waitFor(() => expect(waiting.output()).toContain('[approval] toolu_03'), { timeout: 30_000, interval: 20 });
    const journal = fs.readFileSync(journalOf(dir, null));

    const held = await cli(['keys', 'rotate', '--seal-plain'], dir, { DURABLE_AGENT_KEYS: K1 });
    expect(held.code).toBe(REFUSED);
    expect(held.stdout).toContain(`left plain ${journalOf(dir, null)}`);
    expect(held.stdout).toContain('0 plain runs sealed under k1, 0 finished, 1 in use left for later');
    expect(fs.readFileSync(journalOf(dir, null)).equals(journal)).toBe(true);
    expect(waiting.child.exitCode).toBeNull();

    const approved = await cli(['approve', 'toolu_03'], dir);
    expect(approved.code, approved.stderr).toBe(0);
    const done = await waiting.done;
    expect(done.code, done.stderr).toBe(0);
    expect(headerOf(dir, null).sealed).toBeUndefined();

    const sealed = await cli(['keys', 'rotate', '--seal-plain'], dir, { DURABLE_AGENT_KEYS: K1 });
    expect(sealed.code, sealed.stderr).toBe(0);
    expect(sealed.stdout).toContain('1 plain run sealed under k1');
    for (const secret of SECRETS) expect(stateText(dir)).not.toContain(secret);
  });

  it.each(SEAL_IN_POINTS)('SIGKILLed at %s of the run with a decision waiting: every run still reads, and a second rotation finishes', async (point) => {
    const dir = await plainFolder();
    const killed = await cli(['keys', 'rotate', '--seal-plain'], dir, { DURABLE_AGENT_KEYS: K1, CRASH_AFTER: `seal-plain:${point}` });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    // The run killed in is plain or sealed as the point says, whole either way; the others untouched.
    const swapped = point === 'journal-swapped' || point === 'inboxes';
    expect(headerOf(dir, null).sealed !== undefined).toBe(swapped);
    expect(sealedRecords(dir, null)).toBe(swapped ? 'all' : 'none');
    for (const run of ['alpha', 'beta']) expect(sealedRecords(dir, run)).toBe('none');
    await expectReadable(dir, K1);

    // Killed after the swap, before its inbox was sealed: the note waits plain, and the next rotation seals it (finished).
    const again = await cli(['keys', 'rotate', '--seal-plain'], dir, { DURABLE_AGENT_KEYS: K1 });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`${swapped ? 2 : 3} plain runs sealed under k1, ${point === 'journal-swapped' ? 1 : 0} finished, 0 in use left for later, 0 could not be`);
    for (const run of RUNS) expect(sealedRecords(dir, run)).toBe('all');
    const text = stateText(dir);
    for (const secret of [...SECRETS, NOTE]) expect(text).not.toContain(secret);
    for (const name of fs.readdirSync(path.join(dir, '.durable-agent'))) expect(name).not.toMatch(/\.seal-|\.tmp-/);
    await expectReadable(dir, K1);
    const resumed = await cli(['demo', '--resume'], dir, { DURABLE_AGENT_KEYS: K1 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(`(${NOTE})`);
  });
});
