/**
 * A person in the loop, on the command line, with real processes: a demo run that needs an
 * approval stops (exit 7) or waits; approve, deny and answer come from other processes; SIGKILL
 * of either side at the points that matter leaves no decision or a whole one, applied once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { buildReport, SAMPLE_NOTES } from '../../src/demo/demo-task.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { type CliRun, runCliAsync, startCli } from '../helpers/cli.ts';
import { toolResultOf, toolUseProblems } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const EXPECTED_REPORT = buildReport(SAMPLE_NOTES, '57 words');
const WAITING = 7;

function auditLines(dir: string): string[] {
  const file = path.join(dir, 'report-audit.log');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

function inboxFiles(dir: string): string[] {
  const inbox = path.join(dir, '.durable-agent', 'decisions');
  return fs.existsSync(inbox) ? fs.readdirSync(inbox).sort() : [];
}

async function journal(dir: string) {
  const store = new FileStore(path.join(dir, '.durable-agent'));
  const loaded = await store.load();
  return { view: foldJournal(store.location, loaded), events: loaded.records.map((stored) => stored.record.event as string) };
}

const cli = (args: string[], cwd: string, env?: Record<string, string | undefined>) => runCliAsync(args, { cwd, ...(env ? { env } : {}) });

/** A demo stopped at write_report, waiting for a decision (exit 7). */
async function stoppedDemo(extra: string[] = []): Promise<{ dir: string; run: CliRun }> {
  const dir = tempDir();
  const run = await cli(['demo', '--dir', dir, '--require-approval', 'write_report', '--no-wait', ...extra], dir);
  expect(run.code, run.stderr).toBe(WAITING);
  return { dir, run };
}

function expectClean(run: CliRun, code = 0): void {
  expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(code);
}

describe('a demo run that needs an approval, stopped (--no-wait)', () => {
  it('stops with exit 7 before write_report runs, and prints the call and the commands that decide it', async () => {
    const { dir, run } = await stoppedDemo();
    expect(run.stdout).toContain('[turn 3][save A] pending=write_report\n[approval] toolu_03 write_report waits for a decision\n');
    // The run is in the current directory: the commands need no --dir (see decision-lines.test.ts for a quoted one).
    expect(run.stdout).toMatch(/\n {2}approve: (npx --no-install )?durable-agent approve toolu_03\n {2}deny: {4}(npx --no-install )?durable-agent deny toolu_03 --reason 'TEXT'\n/);
    // The rule is pinned in the journal's header: a bare --resume applies it, so the command needs no flags.
    expect(run.stdout).toMatch(/\n\[waiting\] toolu_03 .*\n {2}resume: {2}(npx --no-install )?durable-agent demo --resume\n$/);
    expect(fs.existsSync(path.join(dir, 'report.txt'))).toBe(false);
    expect(auditLines(dir)).toEqual([]);
  });

  it('`pending --json` lists the waiting call: who, what, since when', async () => {
    const { dir } = await stoppedDemo();
    const listed = await cli(['pending', '--dir', dir, '--json'], dir);
    expectClean(listed);
    const pending = JSON.parse(listed.stdout);
    expect(pending).toEqual([
      {
        runId: expect.any(String),
        tool_use_id: 'toolu_03',
        name: 'write_report',
        input: { content: EXPECTED_REPORT },
        needs: 'approval',
        since: expect.any(Number),
        awaited: true,
        given: null,
      },
    ]);
    expect(Math.abs(Date.now() - pending[0].since)).toBeLessThan(60_000);
    const plain = await cli(['pending', '--dir', dir], dir);
    expect(plain.stdout).toMatch(/^call +tool +waits for +since +state +input\ntoolu_03 +write_report +approval +\S+ \(\d+ s ago\) +the run waits on it +\{"content"/);
    expect(plain.stdout).toContain(`approve: `);
  });

  it('approved from another process, then --resume writes the report once', async () => {
    const { dir } = await stoppedDemo();
    const approved = await cli(['approve', '--dir', dir, 'toolu_03', '--note', 'fine', '--by', 'ana'], dir);
    expectClean(approved);
    expect(approved.stdout).toMatch(/^\[given\] toolu_03 write_report approved by ana \(note: fine\)\nWritten to the run’s inbox; the run takes it up and records it: a run that waits within a second, .*\((npx --no-install )?durable-agent demo --resume\)\. /);
    expect(inboxFiles(dir)).toEqual(['toolu_03.json']);
    expect(JSON.parse((await cli(['pending', '--dir', dir, '--json'], dir)).stdout)[0].given).toMatchObject({ verdict: 'approved', by: 'ana', note: 'fine' });

    const resumed = await cli(['demo', '--dir', dir, '--resume', '--require-approval', 'write_report', '--no-wait'], dir);
    expectClean(resumed);
    expect(resumed.stdout).toContain('[decided] toolu_03 write_report approved by ana');
    // The decision was at hand: the resume does not announce a wait it never did.
    expect(resumed.stdout).not.toContain('[approval]');
    expect(resumed.stdout).not.toContain('approve: ');
    expect(resumed.stdout).toContain('[done] Report written to report.txt, task complete.');
    expect(fs.readFileSync(path.join(dir, 'report.txt'), 'utf8')).toBe(EXPECTED_REPORT);
    expect(auditLines(dir)).toHaveLength(1);
    expect(inboxFiles(dir)).toEqual([]);
    const { view, events } = await journal(dir);
    expect(view.state).toBe('done');
    expect(events.filter((event) => event === 'DECISION')).toHaveLength(1);
    expect(toolUseProblems(view.context.messages)).toEqual([]);
    expect(JSON.parse((await cli(['pending', '--dir', dir, '--json'], dir)).stdout)).toEqual([]);
  });

  it('denied from another process: the model gets the denial, the report is never written', async () => {
    const { dir } = await stoppedDemo();
    expectClean(await cli(['deny', '--dir', dir, 'toolu_03', '--reason', 'not before Monday', '--by', 'bo'], dir));
    const resumed = await cli(['demo', '--dir', dir, '--resume'], dir);
    expectClean(resumed);
    expect(resumed.stdout).toContain('[decided] toolu_03 write_report denied by bo: not before Monday');
    expect(fs.existsSync(path.join(dir, 'report.txt'))).toBe(false);
    expect(auditLines(dir)).toEqual([]);
    const { view } = await journal(dir);
    const result = toolResultOf(view.context.messages, 'toolu_03');
    expect(result).toMatchObject({ is_error: true });
    expect(JSON.stringify(result?.content)).toContain('denied by a person: not before Monday');
  });

  it('approved with edited input: the report is the edited one, and the model is told', async () => {
    const { dir } = await stoppedDemo();
    expectClean(await cli(['approve', '--dir', dir, 'toolu_03', '--input', '{"content":"Short report."}'], dir));
    expectClean(await cli(['demo', '--dir', dir, '--resume'], dir));
    expect(fs.readFileSync(path.join(dir, 'report.txt'), 'utf8')).toBe('Short report.');
    const { view } = await journal(dir);
    expect(JSON.stringify(toolResultOf(view.context.messages, 'toolu_03')?.content)).toMatch(/person/);
  });

  it('status shows what waits and since when; history shows the decision', async () => {
    const { dir } = await stoppedDemo();
    const status = await cli(['status', '--dir', dir], dir);
    expectClean(status);
    expect(status.stdout).toMatch(/^state +awaitingDecision$/m);
    expect(status.stdout).toMatch(/^waiting +toolu_03 write_report: approval, since \S+ \(\d+ s ago\)$/m);
    expectClean(await cli(['approve', '--dir', dir, 'toolu_03', '--by', 'ana'], dir));
    expectClean(await cli(['demo', '--dir', dir, '--resume'], dir));
    const history = await cli(['history', '--dir', dir], dir);
    expect(history.stdout).toMatch(/DECISION_NEEDED .*toolu_03 waits for approval/);
    expect(history.stdout).toMatch(/DECISION .*toolu_03 approved by ana/);
  });
});

describe('bad decisions: exit 2, nothing written', () => {
  it('refuses a second decision, a verdict that does not fit, a call that does not wait, an unknown call, run or directory', async () => {
    const { dir } = await stoppedDemo();
    const refused = async (args: string[], words: RegExp) => {
      const run = await cli(args, dir);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(words);
      expect(run.stdout).toBe('');
    };
    await refused(['answer', '--dir', dir, 'toolu_03', 'yes'], /waits for approval, not for an answer/);
    await refused(['approve', '--dir', dir, 'toolu_02'], /toolu_02 \(count_words\) is not open any more/);
    await refused(['approve', '--dir', dir, 'toolu_99'], /has no call toolu_99/);
    await refused(['approve', '--dir', dir, '../toolu_03'], /is not a call id/);
    await refused(['approve', '--dir', dir, 'toolu_03', '--input', 'not json'], /--input is not JSON/);
    await refused(['approve', '--dir', dir, 'toolu_03', '--input', '{"content":5}'], /does not fit the input schema of write_report: \/content must be string/);
    await refused(['approve', '--dir', dir, 'toolu_03', '--input', '{"content":"x","extra":1}'], /does not fit the input schema/);
    await refused(['approve', '--dir', path.join(dir, 'nowhere'), 'toolu_03'], /no such directory/);
    await refused(['approve', '--dir', tempDir(), 'toolu_03'], /No run is stored at/);
    await refused(['pending', '--dir', tempDir()], /No run is stored at/);
    expect(inboxFiles(dir)).toEqual([]);

    expectClean(await cli(['deny', '--dir', dir, 'toolu_03', '--reason', 'no'], dir));
    const before = fs.readFileSync(path.join(dir, '.durable-agent', 'decisions', 'toolu_03.json'), 'utf8');
    await refused(['approve', '--dir', dir, 'toolu_03'], /toolu_03 \(write_report\) is already denied by .* \(no\).*decided once/);
    await refused(['deny', '--dir', dir, 'toolu_03', '--reason', 'again'], /already denied/);
    expect(fs.readFileSync(path.join(dir, '.durable-agent', 'decisions', 'toolu_03.json'), 'utf8')).toBe(before);

    expectClean(await cli(['demo', '--dir', dir, '--resume'], dir));
    await refused(['approve', '--dir', dir, 'toolu_03'], /toolu_03 \(write_report\) is not open any more/);
    expect(inboxFiles(dir)).toEqual([]);
  });

  it('refuses --require-approval of a tool the run does not have, naming those it has', async () => {
    const dir = tempDir();
    const run = await cli(['demo', '--dir', dir, '--require-approval', 'write_repot'], dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/write_repot.*read_notes, count_words, write_report/);
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'journal.jsonl'))).toBe(false);
  });
});

describe('a run that waits (--wait, stdout not a terminal)', () => {
  it('picks up an approve given by another process within a second, and finishes', async () => {
    const dir = tempDir();
    const waiting = startCli(['demo', '--dir', dir, '--require-approval', 'write_report', '--wait', '--pace', '20'], { cwd: dir });
    await vi.waitFor(() => expect(waiting.output()).toContain('[approval] toolu_03 write_report waits for a decision'), { timeout: 20_000, interval: 10 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(waiting.child.exitCode).toBeNull();
    const approved = await cli(['approve', '--dir', dir, 'toolu_03'], dir);
    const decidedAt = Date.now();
    expectClean(approved);
    await vi.waitFor(() => expect(waiting.output()).toContain('[decided] toolu_03'), { timeout: 30_000, interval: 10 });
    const pickedUpMs = Date.now() - decidedAt;
    console.log(`[approval] a waiting run took up the approve ${pickedUpMs} ms after the approve process exited`);
    expect(pickedUpMs).toBeLessThan(1_000);
    const done = await waiting.done;
    expectClean(done);
    expect(fs.readFileSync(path.join(dir, 'report.txt'), 'utf8')).toBe(EXPECTED_REPORT);
    expect(auditLines(dir)).toHaveLength(1);
    expect(inboxFiles(dir)).toEqual([]);
  });
});

describe('SIGKILL of the approve process while it writes', () => {
  it.each([
    ['after-decision-temp:1', null],
    ['after-decision-link:1', 'approved'],
  ] as const)('killed %s: the decision is %s, never half there', async (point, verdict) => {
    const { dir } = await stoppedDemo();
    const killed = await cli(['approve', '--dir', dir, 'toolu_03'], dir, { CRASH_AFTER: point });
    expect(killed.signal).toBe('SIGKILL');
    const pending = JSON.parse((await cli(['pending', '--dir', dir, '--json'], dir)).stdout);
    expect(pending[0].given?.verdict ?? null).toBe(verdict);
    const again = await cli(['approve', '--dir', dir, 'toolu_03'], dir);
    expect(again.code).toBe(verdict === null ? 0 : 2);
    expect(inboxFiles(dir).filter((name) => name.endsWith('.json'))).toEqual(['toolu_03.json']);
    expectClean(await cli(['demo', '--dir', dir, '--resume'], dir));
    expect(auditLines(dir)).toHaveLength(1);
    expect(inboxFiles(dir)).toEqual([]);
  });

  it('killed at random moments: each time no decision or a whole one', async () => {
    const { dir } = await stoppedDemo();
    const file = path.join(dir, '.durable-agent', 'decisions', 'toolu_03.json');
    let whole = 0;
    let none = 0;
    for (let i = 0; i < 12; i++) {
      const approve = startCli(['approve', '--dir', dir, 'toolu_03', '--note', 'x'.repeat(20_000)], { cwd: dir });
      await new Promise((resolve) => setTimeout(resolve, 60 + Math.random() * 200));
      approve.child.kill('SIGKILL');
      await approve.done;
      const listed = await cli(['pending', '--dir', dir, '--json'], dir);
      expectClean(listed);
      const given = JSON.parse(listed.stdout)[0].given;
      if (given) {
        expect(given).toMatchObject({ verdict: 'approved', note: 'x'.repeat(20_000) });
        whole++;
        fs.rmSync(file);
      } else {
        expect(fs.existsSync(file)).toBe(false);
        none++;
      }
    }
    console.log(`[approval] approve killed at random: ${whole} whole decisions, ${none} none, 0 torn`);
  });
});

describe('SIGKILL of the run around its DECISION record', () => {
  it('killed while it waits, then approved: the resume applies the decision once', async () => {
    const dir = tempDir();
    const waiting = startCli(['demo', '--dir', dir, '--require-approval', 'write_report', '--wait'], { cwd: dir });
    await vi.waitFor(() => expect(waiting.output()).toContain('[approval] toolu_03'), { timeout: 20_000, interval: 10 });
    waiting.child.kill('SIGKILL');
    await waiting.done;
    expectClean(await cli(['approve', '--dir', dir, 'toolu_03'], dir));
    expectClean(await cli(['demo', '--dir', dir, '--resume'], dir));
    expect(auditLines(dir)).toHaveLength(1);
    expect((await journal(dir)).events.filter((event) => event === 'DECISION')).toHaveLength(1);
    expect(inboxFiles(dir)).toEqual([]);
  });

  it('killed right after the DECISION record, before the inbox file is removed: the resume applies it once, the next run asks again', async () => {
    const { dir } = await stoppedDemo();
    expectClean(await cli(['approve', '--dir', dir, 'toolu_03'], dir));
    const killed = await cli(['demo', '--dir', dir, '--resume'], dir, { CRASH_AFTER: 'after-save-decision:1', CRASH_MODE: 'sigkill' });
    expect(killed.signal).toBe('SIGKILL');
    expect(inboxFiles(dir)).toEqual(['toolu_03.json']);
    expect((await journal(dir)).events.filter((event) => event === 'DECISION')).toHaveLength(1);
    const resumed = await cli(['demo', '--dir', dir, '--resume'], dir);
    expectClean(resumed);
    expect(auditLines(dir)).toHaveLength(1);
    expect((await journal(dir)).events.filter((event) => event === 'DECISION')).toHaveLength(1);

    // The file left behind belongs to that run: the next run in the directory (the finished one is
    // archived, with its decisions) asks again for its own toolu_03, the scripted model's same id.
    const next = await cli(['demo', '--dir', dir, '--require-approval', 'write_report', '--no-wait'], dir);
    expect(next.code, next.stdout).toBe(WAITING);
    expect(auditLines(dir)).toHaveLength(1);
    expect(inboxFiles(dir)).toEqual([]);
  });

  it('a new run never takes up decisions left in the directory by another run', async () => {
    const { dir } = await stoppedDemo();
    expectClean(await cli(['approve', '--dir', dir, 'toolu_03'], dir));
    const fresh = await cli(['demo', '--dir', dir, '--fresh', '--require-approval', 'write_report', '--no-wait'], dir);
    expect(fresh.code, fresh.stdout).toBe(WAITING);
    expect(fs.existsSync(path.join(dir, 'report.txt'))).toBe(false);
    expect(inboxFiles(dir)).toEqual([]);
    const archived = fs.readdirSync(path.join(dir, '.durable-agent', 'archive'));
    expect(archived.some((name) => name.startsWith('decisions-'))).toBe(true);
  });
});

describe('the rule for decisions is pinned in the run, not in the process', () => {
  it('a bare --resume of a run started with --require-approval still asks before write_report', async () => {
    const dir = tempDir();
    // Killed after its first checkpoint A (read_notes): write_report is not asked for yet.
    expectClean(await cli(['demo', '--dir', dir, '--require-approval', 'write_report'], dir, { CRASH_AFTER: 'after-save-a:1' }), 137);
    const header = JSON.parse(fs.readFileSync(path.join(dir, '.durable-agent', 'journal.jsonl'), 'utf8').split('\n')[0]!.slice(9));
    expect(header).toMatchObject({ version: 2, decisionPolicy: { requireApproval: ['write_report'] } });
    const resumed = await cli(['demo', '--dir', dir, '--resume', '--no-wait'], dir);
    expectClean(resumed, WAITING);
    expect(resumed.stdout).toContain('[approval] toolu_03 write_report waits for a decision');
    expect(fs.existsSync(path.join(dir, 'report.txt'))).toBe(false);
    expect(auditLines(dir)).toEqual([]);
    // A worker-like resume (no terminal, no flags) after the approval: the decision is applied once.
    expectClean(await cli(['approve', '--dir', dir, 'toolu_03'], dir));
    expectClean(await cli(['demo', '--dir', dir, '--resume'], dir));
    expect(auditLines(dir)).toHaveLength(1);
  });

  it('a resume may add to the rule, not loosen it: a longer deadline is refused unless --replace-decision-policy', async () => {
    const { dir } = await stoppedDemo(['--decision-timeout', '15m']);
    const looser = await cli(['demo', '--dir', dir, '--resume', '--no-wait', '--decision-timeout', '2h'], dir);
    expectClean(looser, 2);
    expect(looser.stderr).toContain('its decision deadline is 15m, and this resume gives 2h');
    expect(looser.stderr).toContain('--replace-decision-policy');
    expect((await journal(dir)).events.at(-1)).toBe('DECISION_NEEDED');
    // Stricter is fine (and so is the same rule given again).
    expectClean(await cli(['demo', '--dir', dir, '--resume', '--no-wait', '--decision-timeout', '10m', '--require-approval', 'write_report'], dir), WAITING);
    // Replaced on purpose: the longer deadline is taken; the call flagged at checkpoint A still waits (its flag is in the journal).
    const replaced = await cli(['demo', '--dir', dir, '--resume', '--no-wait', '--replace-decision-policy', '--decision-timeout', '2h'], dir);
    expectClean(replaced, WAITING);
    expect(auditLines(dir)).toEqual([]);
  });

  it('--replace-decision-policy only applies to --resume', async () => {
    const dir = tempDir();
    const run = await cli(['demo', '--dir', dir, '--replace-decision-policy'], dir);
    expectClean(run, 2);
    expect(run.stderr).toContain('--replace-decision-policy only applies to --resume');
  });

  it('a run that cannot wait for a person keeps journal version 1 (older releases read it); one that can is version 2', async () => {
    const plain = tempDir();
    expectClean(await cli(['demo', '--dir', plain], plain));
    const header = JSON.parse(fs.readFileSync(path.join(plain, '.durable-agent', 'journal.jsonl'), 'utf8').split('\n')[0]!.slice(9));
    expect(header.version).toBe(1);
    expect(header.decisionPolicy).toBeUndefined();
  });
});
