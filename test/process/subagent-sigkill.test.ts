/**
 * Sub-agents under real SIGKILLs, on the file store: the editor (two writer sub-agent calls of
 * one reply, each child writing its note under its call's idempotency key) in a process of its
 * own, killed by the kernel at points of the parent's path and of a child's, then started again
 * (which attaches to the run and resumes it): exactly two child runs exist, each note was
 * written once, and the parent was charged for its children once. A cancel of the parent from
 * the CLI while a child runs: the parent's process exits 9 and the child's journal ends cancelled.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { totalTokens } from '../../machines/agent-loop.logic.ts';
import { childRunIdOf, FileRuns, listRuns, openRun } from '../../src/index.ts';
import type { SubagentPlay } from '../fixtures/subagent-play.ts';
import { REPO, runCli } from '../helpers/cli.ts';
import { auditOf } from '../helpers/subagent-agents.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const FIXTURE = path.join(REPO, 'test', 'fixtures', 'subagent-play.ts');
const TSX = pathToFileURL(createRequire(path.join(REPO, 'package.json')).resolve('tsx')).href;
const PARENT = 'editor-1';

// Where a kill leaves work open or just recorded: the parent's reply, its calls returned and
// recorded, its turn's close with the charge, its answer; a child's the same on its own path.
const PARENT_POINTS = ['after-save-a:1', 'after-tool-return:1', 'after-effect-write:1', 'after-save-b:1', 'after-save-done:1'];
const CHILD_POINTS = ['after-save-a:1', 'after-tool-return:1', 'after-effect-write:1', 'after-save-done:1'];

function play(args: SubagentPlay, onStarted?: (pid: number) => void): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  const child = spawn(process.execPath, ['--import', TSX, FIXTURE, JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'pipe'] });
  onStarted?.(child.pid!);
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, output }));
  });
}

async function expectTwoChildrenOnce(dir: string, label: string) {
  const runs = new FileRuns(path.join(dir, '.durable-agent'));
  const listed = (await listRuns(runs)).filter((run) => !run.archived);
  expect(listed.filter((run) => run.calledBy?.runId === PARENT).map((run) => [run.runId, run.state]).sort(), label).toEqual([
    [childRunIdOf(PARENT, 'toolu_a'), 'done'],
    [childRunIdOf(PARENT, 'toolu_b'), 'done'],
  ]);
  expect(auditOf(dir), label).toHaveLength(2);
  expect(new Set(auditOf(dir)).size, label).toBe(2);
  const parent = await openRun({ store: runs.store(PARENT) }).status();
  expect(parent.state, label).toBe('done');
  // Charged once: what the parent counted for its children is what they spent.
  const children = await Promise.all(['toolu_a', 'toolu_b'].map((call) => openRun({ store: runs.store(childRunIdOf(PARENT, call)) }).status()));
  expect(totalTokens(parent.chargedUsage!), label).toBe(children.reduce((sum, child) => sum + totalTokens(child.usage), 0));
}

describe('sub-agents under SIGKILL', () => {
  it.each([
    ...PARENT_POINTS.map((point) => ({ who: 'parent', point })),
    ...CHILD_POINTS.map((point) => ({ who: 'child', point })),
  ])('killed at $point of the $who and started again: two child runs, each note once', async ({ who, point }) => {
    const dir = tempDir();
    const killed = await play({ dir, ...(who === 'parent' ? { parentKillAt: point } : { childKillAt: point }) });
    expect(killed.signal, killed.output).toBe('SIGKILL');
    const resumed = await play({ dir });
    expect(resumed.code, resumed.output).toBe(0);
    expect(JSON.parse(resumed.output.trim().split('\n').at(-1)!).status).toBe('done');
    await expectTwoChildrenOnce(dir, `${who} ${point}`);
  });

  it("a cancel of the parent from the CLI while its children run: the parent's process exits 9, each child's journal ends cancelled", async () => {
    const dir = tempDir();
    const runs = new FileRuns(path.join(dir, '.durable-agent'));
    const running = play({ dir, slowMs: 20_000 });
    // A child not made yet cannot be read: that check is tried again.
    await vi.waitFor(async () => expect((await openRun({ store: runs.store(childRunIdOf(PARENT, 'toolu_a')) }).status()).state, 'the child runs its tool').toBe('pendingTool'), { timeout: 30_000, interval: 50 });
    const cancel = runCli(['cancel', '--dir', dir, '--run', PARENT, '--by', 'ana'], { cwd: dir });
    expect(cancel.code, cancel.stderr).toBe(0);
    const ended = await running;
    expect(ended.code, ended.output).toBe(9);
    // The cancel ended the writes under way: no note was written.
    expect(auditOf(dir)).toEqual([]);
    for (const call of ['toolu_a', 'toolu_b']) {
      const status = runCli(['status', '--dir', dir, '--run', childRunIdOf(PARENT, call), '--json'], { cwd: dir });
      expect(status.code, status.stderr).toBe(0);
      const child = JSON.parse(status.stdout);
      expect([child.state, child.cancellation?.by, child.calledBy], call).toEqual(['cancelled', 'ana', { runId: PARENT, toolUseId: call }]);
    }
    const parentStatus = JSON.parse(runCli(['status', '--dir', dir, '--run', PARENT, '--json'], { cwd: dir }).stdout);
    expect(parentStatus.state).toBe('cancelled');
    expect(parentStatus.children.map((child: { state: string }) => child.state)).toEqual(['cancelled', 'cancelled']);
  });
});
