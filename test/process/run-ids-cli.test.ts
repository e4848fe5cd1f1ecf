/**
 * Run ids from the command line, as a user types them: `demo --run ID` started, killed after its
 * effect, run again, killed after its final record, run twice more: write_report writes once,
 * and the later starts attach; `list` shows the runs of one folder; a bad id exits 2 with
 * nothing written; status, history, pending and cancel reach a run by its id.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

/** When write_report last wrote the report (a second write would change it). */
function reportWrites(dir: string): number {
  const report = path.join(dir, 'report.txt');
  return fs.existsSync(report) ? fs.statSync(report).mtimeMs : 0;
}

describe('durable-agent --run ID', () => {
  it('demo --run ID: killed after the effect, again, killed after the done record, again twice: one report, attached after', () => {
    const dir = tempDir();
    const demo = (env: Record<string, string> = {}) => runCli(['demo', '--dir', dir, '--run', 'report-1', '--plain'], { cwd: dir, env });
    expect(demo({ CRASH_AFTER: 'after-effect-write:3' }).code).toBe(137);
    const written = reportWrites(dir);
    expect(written).toBeGreaterThan(0);
    expect(demo({ CRASH_AFTER: 'after-save-done:1' }).code).toBe(137);
    expect(reportWrites(dir)).toBe(written);
    expect(demo().code).toBe(0);
    const again = demo();
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('[attach] run report-1');
    expect(again.stdout).toContain('[done]');
    expect(reportWrites(dir)).toBe(written);
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'runs', 'report-1', 'journal.jsonl'))).toBe(true);
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'journal.jsonl'))).toBe(false);
    const status = runCli(['status', '--dir', dir, '--run', 'report-1'], { cwd: dir });
    expect(status.stdout).toMatch(/^run +report-1$/m);
    expect(status.stdout).toMatch(/^state +done$/m);
  });

  it('list: the runs of one folder with their states; --state picks', () => {
    const dir = tempDir();
    expect(runCli(['demo', '--dir', dir, '--run', 'a', '--plain'], { cwd: dir }).code).toBe(0);
    expect(runCli(['demo', '--dir', dir, '--run', 'b', '--plain', '--require-approval', 'write_report', '--no-wait'], { cwd: dir }).code).toBe(7);
    expect(runCli(['demo', '--dir', dir, '--run', 'c', '--plain'], { cwd: dir, env: { CRASH_AFTER: 'after-save-a:2' } }).code).toBe(137);
    const list = runCli(['list', '--dir', dir], { cwd: dir });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^a +done +Turn sales-notes/m);
    expect(list.stdout).toMatch(/^b +awaitingDecision /m);
    expect(list.stdout).toMatch(/^c +pendingTool /m);
    expect(list.stdout).toContain('3 runs in');
    const waiting = JSON.parse(runCli(['list', '--dir', dir, '--state', 'waiting', '--json'], { cwd: dir }).stdout);
    expect(waiting.map((run: { runId: string }) => run.runId)).toEqual(['b']);
    const pending = runCli(['pending', '--dir', dir, '--run', 'b'], { cwd: dir });
    expect(pending.stdout).toContain('write_report');
    expect(pending.stdout).toContain(`--run b`);
    expect(runCli(['list', '--dir', dir, '--state', 'sleeping'], { cwd: dir }).code).toBe(2);
  });

  it('continues a finished conversation by its id (--resume --message), the other runs of the folder untouched', () => {
    const dir = tempDir();
    for (const id of ['chat-1', 'chat-2']) expect(runCli(['demo', '--dir', dir, '--run', id, '--plain'], { cwd: dir }).code).toBe(0);
    const other = fs.readFileSync(path.join(dir, '.durable-agent', 'runs', 'chat-2', 'journal.jsonl'));
    const cont = runCli(['demo', '--dir', dir, '--run', 'chat-1', '--resume', '--plain', '--message', 'Add the churn figure too.'], { cwd: dir });
    expect(cont.code, cont.stderr).toBe(0);
    expect(cont.stdout).toContain('You said: "Add the churn figure too."');
    const listed = JSON.parse(runCli(['list', '--dir', dir, '--json'], { cwd: dir }).stdout) as Array<{ runId: string; state: string }>;
    expect(listed.map((run) => [run.runId, run.state]).sort()).toEqual([['chat-1', 'done'], ['chat-2', 'done']]);
    const status = runCli(['status', '--dir', dir, '--run', 'chat-1'], { cwd: dir });
    expect(status.stdout).toMatch(/^continued +after turn 3, .*"Add the churn figure too\."$/m);
    expect(status.stdout).toMatch(/^answer +You said: "Add the churn figure too\."/m);
    expect(fs.readFileSync(path.join(dir, '.durable-agent', 'runs', 'chat-2', 'journal.jsonl')).equals(other)).toBe(true);
    const history = runCli(['history', '--dir', dir, '--run', 'chat-1'], { cwd: dir });
    expect(history.stdout).toMatch(/REOPEN .*continued with the message "Add the churn figure too\."/);
  });

  it('refuses an id with a / or .. before anything is written (exit 2)', () => {
    const dir = tempDir();
    for (const id of ['../x', 'a/b', '..']) {
      const run = runCli(['demo', '--dir', dir, '--run', id], { cwd: dir });
      expect(run.code, id).toBe(2);
      expect(run.stderr).toContain('is not a run id');
    }
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
