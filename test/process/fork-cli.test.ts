/**
 * The real CLI forks a run: at an open turn whose side effect the parent did after the fork
 * point (listed, and not reused by the fork's resume), at the last resting point with a
 * message, with idempotency keys of its own; lineage in status and history; the refusals
 * (exit 2, nothing written); a failed write and real SIGKILLs in the middle leave no half run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { runCliAsync, startCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const journalOf = (dir: string) => path.join(dir, '.durable-agent', 'journal.jsonl');

interface Step {
  seq: number;
  point: string;
  turn: number;
}

async function historyOf(dir: string): Promise<Step[]> {
  const history = await runCliAsync(['history', '--json', '--dir', dir], { cwd: dir });
  expect(history.code, history.stderr).toBe(0);
  return JSON.parse(history.stdout) as Step[];
}

async function finishedDemo(...flags: string[]): Promise<string> {
  const dir = tempDir();
  const run = await runCliAsync(['demo', '--plain', ...flags], { cwd: dir });
  expect(run.code, run.stderr).toBe(0);
  return dir;
}

function keysIn(dir: string): string[] {
  return [...fs.readFileSync(path.join(dir, 'report-audit.log'), 'utf8').matchAll(/idempotency_key=(\S+)/g)].map((m) => m[1]!);
}

describe('durable-agent fork', () => {
  it('at an open turn: lists the side effect the parent did after it; the fork reports it unknown instead of reusing it; lineage shows', async () => {
    const dir = await finishedDemo('--no-verify');
    const before = fs.readFileSync(journalOf(dir));
    const at = (await historyOf(dir)).filter((step) => step.point === 'save-a')[2]!.seq; // write_report open
    const to = path.join(tempDir(), 'fork');
    const fork = await runCliAsync(['fork', '--dir', dir, '--at', String(at), '--to', to], { cwd: dir });
    expect(fork.code, fork.stderr).toBe(0);
    expect(fork.stdout).toContain(`at record ${at} of 0-`);
    expect(fork.stdout).toMatch(/open at the fork point: toolu_03 write_report/);
    expect(fork.stdout).toContain(`these happened in the parent after record ${at} and are not undone`);
    expect(fork.stdout).toMatch(/toolu_03\s+write_report\s+SIDE EFFECT\s+ran; open in the new run\s+\{"content":/);
    expect(fork.stdout).toMatch(new RegExp(`resume the new run: .*demo --resume --dir ${to}`));
    expect(fs.readFileSync(journalOf(dir)).equals(before)).toBe(true);

    const resumed = await runCliAsync(['demo', '--resume', '--plain', '--no-verify', '--dir', to], { cwd: to });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('[reconcile] toolu_03: no result was recorded for it');
    expect(resumed.stdout).toContain('I could not confirm that report.txt was written');
    expect(fs.existsSync(path.join(to, 'report-audit.log'))).toBe(false);
    expect(fs.readFileSync(journalOf(dir)).equals(before)).toBe(true);

    const childStatus = await runCliAsync(['status', '--dir', to], { cwd: to });
    expect(childStatus.stdout).toMatch(new RegExp(`forked from\\s+run \\S+ in ${dir}, at its record ${at}`));
    const parentStatus = await runCliAsync(['status', '--dir', dir], { cwd: dir });
    expect(parentStatus.stdout).toMatch(new RegExp(`fork\\s+at record ${at}: run \\S+ in ${to}`));
    const childHistory = await runCliAsync(['history', '--dir', to], { cwd: to });
    expect(childHistory.stdout).toContain(`fork point: records 0 to ${at} are those of run`);
    const parentHistory = await runCliAsync(['history', '--dir', dir], { cwd: dir });
    expect(parentHistory.stdout).toContain(`forked here into ${to}`);
  });

  it('at the last resting point with --message: the fork continues the conversation; its side effects carry its own keys', async () => {
    const dir = await finishedDemo();
    const to = path.join(tempDir(), 'more');
    const fork = await runCliAsync(['fork', '--to', to, '--message', 'Add the churn figure too.'], { cwd: dir });
    expect(fork.code, fork.stderr).toBe(0);
    expect(fork.stdout).toContain('nothing ran in the parent after record');
    expect(fork.stdout).toMatch(/state awaitingModel/);
    const resumed = await runCliAsync(['demo', '--resume', '--plain', '--dir', to], { cwd: to });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('You said: "Add the churn figure too."');

    // Forked before write_report: the fork writes its own report, under a key the parent's is not.
    const closes = (await historyOf(dir)).filter((step) => step.point === 'save-b');
    const again = path.join(tempDir(), 'again');
    const early = await runCliAsync(['fork', '--at', String(closes[1]!.seq), '--to', again], { cwd: dir });
    expect(early.code, early.stderr).toBe(0);
    expect(early.stdout).toMatch(/toolu_03\s+write_report\s+SIDE EFFECT\s+ran\s/);
    expect((await runCliAsync(['demo', '--resume', '--plain', '--dir', again], { cwd: again })).code).toBe(0);
    const [parentKey] = keysIn(dir);
    const [childKey] = keysIn(again);
    expect(childKey).toMatch(/^da_[0-9a-f]{32}$/);
    expect(childKey).not.toBe(parentKey);
  });

  it('forks a run that another process is driving: the fork takes what is saved, the run goes on undisturbed', async () => {
    const dir = tempDir();
    const live = startCli(['demo', '--plain', '--pace', '400'], { cwd: dir });
    await vi.waitFor(() => expect(live.output()).toContain('[turn 1][save B]'), { timeout: 45_000, interval: 20 });
    const to = path.join(tempDir(), 'from-live');
    const fork = await runCliAsync(['fork', '--to', to, '--json'], { cwd: dir });
    expect(fork.code, fork.stderr).toBe(0);
    const result = JSON.parse(fork.stdout) as { state: string; forkedFrom: { seq: number }; records: number };
    expect(['closed', 'done']).toContain(result.state); // 'done' only on a machine so busy the demo finished meanwhile
    expect(result.records).toBe(result.forkedFrom.seq + 1);
    const finished = await live.done;
    expect(finished.code, finished.stderr).toBe(0);
    expect((await runCliAsync(['demo', '--resume', '--plain', '--dir', to], { cwd: to })).code).toBe(0);
  });

  it('refuses what it cannot do with exit 2 and writes nothing', async () => {
    const dir = await finishedDemo();
    const before = fs.readFileSync(journalOf(dir));
    const steps = await historyOf(dir);
    const last = steps[steps.length - 1]!.seq;
    const taken = path.join(tempDir(), 'taken');
    expect((await runCliAsync(['fork', '--to', taken], { cwd: dir })).code).toBe(0);
    const fresh = path.join(tempDir(), 'fresh');
    const cases: Array<[string[], RegExp]> = [
      [['fork', '--at', String(last + 1), '--to', fresh], new RegExp(`record ${last + 1} does not exist: the run has records 0 to ${last}`)],
      [['fork', '--to', taken], /already holds a run: give a directory with none/],
      [['fork', '--to', dir], /the fork would go where the run is/],
      [['fork', '--at', String(steps.find((s) => s.point === 'save-a')!.seq), '--to', fresh, '--message', 'hi'], /is not a finished conversation \(state pendingTool\).*the last such record is/],
      [['fork'], /fork needs --to NEWDIR/],
      [['fork', '--to', fresh, '--to-run', 'x'], /--to-run names the new fleet run/],
      [['fork', '--dir', fresh, '--to', path.join(tempDir(), 'x')], /no such directory/],
    ];
    for (const [args, message] of cases) {
      const refused = await runCliAsync(args, { cwd: dir });
      expect(refused.code, `${args.join(' ')}: ${refused.stderr}`).toBe(2);
      expect(refused.stderr).toMatch(message);
    }
    expect(fs.existsSync(journalOf(fresh))).toBe(false);
    expect(fs.readFileSync(journalOf(dir)).equals(before)).toBe(true);

    const lines = fs.readFileSync(journalOf(dir), 'utf8').split('\n');
    lines[3] = lines[3]!.replace('"at":', '"at" :'); // record 1 no longer matches its checksum
    fs.writeFileSync(journalOf(dir), lines.join('\n'));
    const damaged = await runCliAsync(['fork', '--to', fresh], { cwd: dir });
    expect(damaged.code).toBe(2);
    expect(damaged.stderr).toMatch(/is damaged/);
    expect(fs.existsSync(journalOf(fresh))).toBe(false);
  });

  it('a write that fails half-way or a SIGKILL at any moment leaves the whole fork or none', async () => {
    const dir = await finishedDemo();
    const failed = path.join(tempDir(), 'failed');
    const full = await runCliAsync(['fork', '--to', failed], { cwd: dir, env: { DURABLE_AGENT_FAIL_WRITE: 'fork-write:1' } });
    expect(full.code, full.stderr).toBe(4);
    expect(full.stderr).toMatch(/forked run/);
    expect(fs.existsSync(journalOf(failed))).toBe(false);
    expect((await runCliAsync(['fork', '--to', failed], { cwd: dir })).code).toBe(0);

    const parentRecords = (await historyOf(dir)).length;
    // Kills spread over the time a whole fork takes here (measured under the same load): from
    // before it reads the parent to after it is done. Each must leave the whole fork or none.
    const started = performance.now();
    expect((await runCliAsync(['fork', '--to', path.join(tempDir(), 'timed')], { cwd: dir })).code).toBe(0);
    const forkMs = performance.now() - started;
    const outcomes: string[] = [];
    for (const fraction of [0.05, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.2, 3]) {
      const to = path.join(tempDir(), `killed-${fraction}`);
      const fork = startCli(['fork', '--to', to], { cwd: dir });
      await new Promise((resolve) => setTimeout(resolve, fraction * forkMs));
      fork.child.kill('SIGKILL');
      await fork.done;
      if (!fs.existsSync(journalOf(to))) {
        outcomes.push('none');
        continue;
      }
      outcomes.push('whole');
      const status = await runCliAsync(['status', '--dir', to], { cwd: to });
      expect(status.code, status.stderr).toBe(0);
      expect((await historyOf(to)).length).toBe(parentRecords);
      expect((await runCliAsync(['fork', '--to', to], { cwd: dir })).code).toBe(2); // a whole run: a second fork there is refused
    }
    expect(outcomes[0]).toBe('none');
    expect(outcomes[outcomes.length - 1]).toBe('whole');
  });
});
