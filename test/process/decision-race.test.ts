/**
 * `approve` racing a decision deadline, with real processes: the deadline's denial is recorded
 * by a resuming run (a real CLI process) while `approve` is between its check and the link of
 * its inbox file. `approve` must not claim success; `pending` and `status` show the deadline's
 * decision; nothing of the late approval stays behind.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DecisionRefusedError } from '../../src/awaits/decision-errors.ts';
import { decideCommand } from '../../src/cli/commands/decide.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { runCli, runCliAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const WAITING = 7;

function capture() {
  const out: string[] = [];
  return { out, writers: { out: (line: string) => out.push(line), err: (line: string) => out.push(`ERR ${line}`) } };
}

describe('approve racing a decision deadline', () => {
  it('says the deadline won when its denial was recorded while the approval was being written, and removes the approval', async () => {
    const dir = tempDir();
    const stopped = await runCliAsync(['demo', '--dir', dir, '--require-approval', 'write_report', '--no-wait'], { cwd: dir });
    expect(stopped.code, stopped.stderr).toBe(WAITING);
    await new Promise((r) => setTimeout(r, 1100));
    let resumed: ReturnType<typeof runCli> | null = null;
    // After approve's checks, before its file is linked under the call's name: a run resumed
    // with a 1 s deadline denies the call (a real process, run to its end).
    const store = new FileStore(path.join(dir, '.durable-agent'), {
      onDecisionPoint: (point) => {
        if (point === 'decision-temp' && !resumed) {
          resumed = runCli(['demo', '--dir', dir, '--resume', '--require-approval', 'write_report', '--decision-timeout', '1s', '--no-wait'], { cwd: dir });
        }
      },
    });
    const { out, writers } = capture();
    const args = { command: 'approve', dir, callId: 'toolu_03', note: null, reason: null, text: null, by: 'ana', dirGiven: true, fleetRun: null, fileRun: null, databaseUrl: null } as const;
    const refused = await decideCommand(args, {}, writers, store).then(
      () => null,
      (error: unknown) => error,
    );
    expect(resumed).not.toBeNull();
    expect(resumed!.code, resumed!.stderr).toBe(0);
    expect(resumed!.stdout).toContain('[decided] toolu_03 write_report denied by deadline: no decision within 1s');
    expect(out.join('\n')).not.toMatch(/approved by ana/);
    expect(refused).toBeInstanceOf(DecisionRefusedError);
    expect((refused as DecisionRefusedError).reason).toBe('already-decided');
    expect((refused as Error).message).toMatch(/^toolu_03 \(write_report\) was denied by deadline: no decision within 1s at \S+ \(record \d+\), just before this decision reached the inbox: that decision holds, this one was not used/);
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'decisions', 'toolu_03.json'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'report.txt'))).toBe(false);

    const pending = await runCliAsync(['pending', '--dir', dir], { cwd: dir });
    expect(pending.stdout).toMatch(/^Nothing waits for a decision in .*\nDecided last \(the run’s last decision\):\n {2}toolu_03 write_report denied by deadline: no decision within 1s, at \S+ \(turn 3, record \d+, waited (?:\d+\.\d s|\d+ s|\d+ min \d\d s)\)\n$/);
    const status = await runCliAsync(['status', '--dir', dir], { cwd: dir });
    expect(status.stdout).toMatch(/^decided +toolu_03 write_report denied by deadline: no decision within 1s, at \S+ \(turn 3, record \d+, waited (?:\d+\.\d s|\d+ s|\d+ min \d\d s)\)$/m);
    const json = JSON.parse((await runCliAsync(['status', '--dir', dir, '--json'], { cwd: dir })).stdout);
    expect(json.decided).toEqual([
      expect.objectContaining({ tool_use_id: 'toolu_03', name: 'write_report', needs: 'approval', verdict: 'denied', by: 'deadline', turn: 3, since: expect.any(Number), waitedMs: expect.any(Number) }),
    ]);
    expect(json.decided[0].waitedMs).toBeGreaterThanOrEqual(1000);
  });

  it('says precisely that an approval is written to the inbox and not yet taken up', async () => {
    const dir = tempDir();
    expect((await runCliAsync(['demo', '--dir', dir, '--require-approval', 'write_report', '--no-wait'], { cwd: dir })).code).toBe(WAITING);
    const approved = await runCliAsync(['approve', '--dir', dir, 'toolu_03', '--by', 'ana', '--note', 'fine'], { cwd: dir });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toMatch(/^\[given\] toolu_03 write_report approved by ana \(note: fine\)\nWritten to the run’s inbox; the run takes it up and records it: /);
    expect(approved.stdout).toContain('`durable-agent status` shows what was recorded');
  });
});
