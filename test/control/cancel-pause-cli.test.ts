/**
 * cancel and pause of a run in a directory, with real processes: a paced demo driven by one
 * process, cancelled or paused from another; a running tool told through ctx.signal; a SIGKILL
 * right after a cancel was asked (the resume applies it), also while the run compacts; a SIGKILL
 * inside the cancel command's own write (a whole request or none); and the refusals (exit 2).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { FileStore } from '../../src/store/file-store.ts';
import { runCliAsync, startCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const cli = (args: string[], env?: Record<string, string | undefined>) => runCliAsync(args, { cwd: tempDir(), ...(env ? { env } : {}) });

async function journalOf(dir: string) {
  const store = new FileStore(path.join(dir, '.durable-agent'));
  try {
    return (await store.load()).records.map((stored) => stored.record);
  } finally {
    store.close();
  }
}

/** Starts a paced demo in `dir` and resolves once its output shows `marker` (a save it made). */
// The pace leaves each step long enough for a second CLI process to start and ask, even on a
// machine so loaded that starting Node takes seconds; the run waits at most one step for it.
async function pacedDemo(dir: string, paceMs: number, marker = '[save A]') {
  const run = startCli(['demo', '--dir', dir, '--pace', String(paceMs), '--plain'], { cwd: dir });
  await vi.waitFor(() => expect(run.output(), `the demo never printed ${marker}`).toContain(marker), { timeout: 30_000, interval: 20 });
  return run;
}

describe('cancel and pause a run in a directory, from another process', () => {
  it('cancel: the running process stops at its next step, records who and why, and exits 9; a resume is refused with the fork command', async () => {
    const dir = tempDir();
    const run = await pacedDemo(dir, 1_500);
    const asked = await cli(['cancel', '--dir', dir, '--reason', 'wrong task', '--by', 'ana']);
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toContain('Cancel asked by ana');
    const ended = await run.done;
    expect(ended.code, ended.stderr).toBe(9);
    expect(ended.stdout).toContain('[cancelled] the run was cancelled by ana');
    expect(ended.stdout).toContain('(reason: wrong task)');
    const records = await journalOf(dir);
    const last = records.at(-1)!;
    expect(last.event).toBe('CANCEL');
    expect(last.state).toBe('cancelled');
    expect(last.cancellation).toMatchObject({ by: 'ana', reason: 'wrong task' });
    const status = await cli(['status', '--dir', dir]);
    expect(status.stdout).toMatch(/state +cancelled/);
    expect(status.stdout).toMatch(/cancelled +by ana at .*\(reason: wrong task\)/);
    expect((await cli(['history', '--dir', dir])).stdout).toMatch(/CANCEL +save-cancelled.*cancelled by ana/);
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'control', 'cancel.json'))).toBe(false);
    const resumed = await cli(['demo', '--dir', dir, '--resume']);
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain(`durable-agent fork --dir ${dir} --to NEWDIR`);
    const again = await cli(['cancel', '--dir', dir]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('is finished (cancelled by ana');
    expect((await journalOf(dir)).length).toBe(records.length);
  });

  it('a running tool gets the abort through ctx.signal and its outcome is recorded (an error result) before the run ends as cancelled', async () => {
    const dir = tempDir();
    // Each step takes 20 s: the tool that runs when the cancel comes can only end early through its signal.
    const run = await pacedDemo(dir, 20_000, '[save A]');
    await new Promise((resolve) => setTimeout(resolve, 300)); // read_notes is running now
    expect((await cli(['cancel', '--dir', dir, '--by', 'bo'])).code).toBe(0);
    const ended = await run.done;
    expect(ended.code, ended.stderr).toBe(9);
    const records = await journalOf(dir);
    const result = records.find((record) => record.event === 'TOOL_RESULT')!;
    expect(result.results!.add[0]).toMatchObject({ name: 'read_notes', kind: 'threw', is_error: true });
    expect(String(result.results!.add[0]!.content)).toContain('the run was asked to cancel by bo');
    expect(records.at(-1)!.event).toBe('CANCEL');
  }, 40_000);

  it('pause: the process stops at its next step (exit 130), status says who paused it, a resume clears the pause and finishes', async () => {
    const dir = tempDir();
    const run = await pacedDemo(dir, 1_500);
    const asked = await cli(['pause', '--dir', dir, '--by', 'cy']);
    expect(asked.code, asked.stderr).toBe(0);
    const ended = await run.done;
    expect(ended.code, ended.stderr).toBe(130);
    expect(ended.stderr).toContain('[paused] the run stopped between two steps (paused by cy');
    const status = await cli(['status', '--dir', dir]);
    expect(status.stdout).toMatch(/paused +by cy at /);
    const notRunning = await cli(['pause', '--dir', dir]);
    expect(notRunning.code).toBe(2);
    expect(notRunning.stderr).toContain('Nothing to pause');
    const resumed = await cli(['demo', '--dir', dir, '--resume', '--plain']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('[done]');
    expect((await cli(['status', '--dir', dir])).stdout).not.toContain('paused');
  });

  it('SIGKILL of the running process right after a cancel was asked: the resume applies the cancel, running nothing of the open turn', async () => {
    const dir = tempDir();
    const run = await pacedDemo(dir, 3_000);
    // Frozen, so that the kill comes before it could see the request (it is alive: the cancel is only asked).
    run.child.kill('SIGSTOP');
    const asked = await cli(['cancel', '--dir', dir, '--by', 'di']);
    expect(asked.stdout).toContain('Cancel asked by di');
    run.child.kill('SIGKILL');
    await run.done;
    expect((await cli(['status', '--dir', dir])).stdout).toMatch(/cancel asked +by di/);
    const before = await journalOf(dir);
    const resumed = await cli(['demo', '--dir', dir, '--resume', '--plain']);
    expect(resumed.code, resumed.stderr).toBe(9);
    const after = await journalOf(dir);
    expect(after.map((record) => record.event)).toEqual([...before.map((record) => record.event), 'CANCEL']);
  });

  it('a process that waits for a decision (--wait) is cancelled from another process: the wait ends, the run is cancelled, exit 9', async () => {
    const dir = tempDir();
    const waiting = startCli(['demo', '--dir', dir, '--require-approval', 'write_report', '--wait', '--plain'], { cwd: dir });
    const deadline = Date.now() + 30_000;
    while (!waiting.output().includes('[approval]')) {
      if (Date.now() > deadline) throw new Error(`the demo never waited: ${waiting.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await cli(['cancel', '--dir', dir, '--by', 'gu'])).code).toBe(0);
    const ended = await waiting.done;
    expect(ended.code, ended.stderr).toBe(9);
    expect((await journalOf(dir)).map((record) => record.state).slice(-2)).toEqual(['awaitingDecision', 'cancelled']);
  });

  it('a cancel asked while the run compacts (client compaction), its process killed there: the resume takes it in compacting, exit 9', async () => {
    const dir = tempDir();
    // The demo's first close passes the trigger of this window; each model call (the summary's too) takes the pace.
    const compacting = ['--compact', 'client', '--context-window', '1000', '--compact-trigger', '0.3'];
    const run = startCli(['demo', '--dir', dir, '--pace', '1500', '--plain', ...compacting], { cwd: dir });
    // Its process writes the journal meanwhile: a read that fails is tried again.
    await vi.waitFor(async () => expect((await journalOf(dir)).at(-1)?.state, `the run never stood in compacting: ${run.output()}`).toBe('compacting'), { timeout: 30_000, interval: 20 });
    // Frozen while it waits for the summary, so that the kill comes before it could see the request.
    run.child.kill('SIGSTOP');
    const asked = await cli(['cancel', '--dir', dir, '--by', 'ana', '--reason', 'too long']);
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toContain('Cancel asked by ana');
    run.child.kill('SIGKILL');
    await run.done;
    const before = await journalOf(dir);
    expect(before.at(-1)!.state).toBe('compacting');
    const resumed = await cli(['demo', '--dir', dir, '--resume', '--plain']);
    expect(resumed.code, resumed.stderr).toBe(9);
    expect(resumed.stdout).toContain('[cancelled] the run was cancelled by ana');
    const after = await journalOf(dir);
    expect(after.map((record) => record.event)).toEqual([...before.map((record) => record.event), 'CANCEL']);
    expect(after.at(-1)).toMatchObject({ state: 'cancelled', cancellation: { by: 'ana', reason: 'too long' } });
  });

  it('a run killed right after its save-compacting record is cancelled by the cancel command itself; a resume is then refused', async () => {
    const dir = tempDir();
    const crashed = await cli(['demo', '--dir', dir, '--compact', 'client', '--context-window', '1000', '--compact-trigger', '0.3'], { CRASH_AFTER: 'after-save-compacting:1' });
    expect(crashed.code, crashed.stderr).toBe(137);
    expect((await journalOf(dir)).at(-1)).toMatchObject({ event: 'COMPACT', state: 'compacting' });
    const asked = await cli(['cancel', '--dir', dir, '--by', 'ed']);
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toContain('[cancelled] the run in');
    expect((await journalOf(dir)).slice(-2).map((record) => record.state)).toEqual(['compacting', 'cancelled']);
    const resumed = await cli(['demo', '--dir', dir, '--resume']);
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain(`durable-agent fork --dir ${dir} --to NEWDIR`);
  });

  it('a run no process drives is cancelled by the cancel command itself', async () => {
    const dir = tempDir();
    const crashed = await cli(['demo', '--dir', dir], { CRASH_AFTER: 'after-save-a:1' });
    expect(crashed.code).toBe(137);
    const asked = await cli(['cancel', '--dir', dir, '--by', 'ed', '--reason', 'stop']);
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toContain('[cancelled] the run in');
    const records = await journalOf(dir);
    expect(records.at(-1)).toMatchObject({ event: 'CANCEL', state: 'cancelled', cancellation: { by: 'ed', reason: 'stop' } });
  });

  it.each([
    ['after-control-temp:1', false],
    ['after-control-link:1', true],
  ])('SIGKILL of the cancel command at %s leaves no request or a whole one', async (point, whole) => {
    const dir = tempDir();
    expect((await cli(['demo', '--dir', dir], { CRASH_AFTER: 'after-save-a:1' })).code).toBe(137);
    const killed = await cli(['cancel', '--dir', dir, '--by', 'fa'], { CRASH_AFTER: point });
    expect(killed.signal).toBe('SIGKILL');
    const status = await cli(['status', '--dir', dir]);
    expect(status.code).toBe(0);
    if (whole) expect(status.stdout).toMatch(/cancel asked +by fa/);
    else expect(status.stdout).not.toContain('cancel asked');
    const resumed = await cli(['demo', '--dir', dir, '--resume', '--plain']);
    expect(resumed.code, resumed.stderr).toBe(whole ? 9 : 0);
  });

  it('a full disk while the request is written: exit 4, nothing asked', async () => {
    const dir = tempDir();
    expect((await cli(['demo', '--dir', dir], { CRASH_AFTER: 'after-save-a:1' })).code).toBe(137);
    const failed = await cli(['cancel', '--dir', dir], { DURABLE_AGENT_FAIL_WRITE: 'control-write:1' });
    expect(failed.code).toBe(4);
    expect((await cli(['status', '--dir', dir])).stdout).not.toContain('cancel asked');
    expect((await journalOf(dir)).at(-1)!.state).toBe('pendingTool');
  });

  it('refuses bad input with exit 2 and what to do', async () => {
    const dir = tempDir();
    const done = await cli(['demo', '--dir', dir]);
    expect(done.code).toBe(0);
    const finished = await cli(['cancel', '--dir', dir]);
    expect(finished.code).toBe(2);
    expect(finished.stderr).toContain('is finished (done');
    expect((await cli(['pause', '--dir', dir])).stderr).toContain('nothing to pause');
    expect((await cli(['cancel', '--dir', path.join(dir, 'nope')])).code).toBe(2);
    expect((await cli(['cancel', '--dir', dir, '--reason', ' '])).stderr).toContain('--reason is empty');
    expect((await cli(['cancel', '--dir', dir, '--database-url', 'postgresql://x@127.0.0.1:1/db', '--run', 'r1'])).stderr).toContain('not both');
    // --dir with --run names a run of DIR's folder of runs: there is none of that id.
    const byId = await cli(['cancel', '--dir', dir, '--run', 'r1']);
    expect(byId.code).toBe(2);
    expect(byId.stderr).toContain(path.join('.durable-agent', 'runs', 'r1'));
    expect((await cli(['cancel', '--dir', dir, '--run', '../r1'])).stderr).toContain('is not a run id');
    expect((await cli(['cancel', '--database-url', 'postgresql://x@127.0.0.1:1/db'])).stderr).toContain('needs --run ID');
    expect((await cli(['resume', '--dir', dir])).code).toBe(2);
    expect((await cli(['resume'])).stderr).toContain('demo --resume');
    expect((await cli(['status', '--dir', tempDir()])).code).toBe(2);
  });
});
