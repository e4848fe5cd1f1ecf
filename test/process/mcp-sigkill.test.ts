/**
 * Real processes, real SIGKILL, real MCP servers: `run --mcp-config` killed at every crash label
 * of a run whose four turns each call an MCP tool of one reconcile rule, then resumed until
 * done. Whatever the label, the non-idempotent append happened once (its verify tool asks the
 * server by idempotency key), the idempotent set_value ends set, and bump (no annotations, no
 * verify) ran at most once: a resume that cannot know tells the model instead of running it.
 */
import { describe, expect, it } from 'vitest';
import { runCliAsync } from '../helpers/cli.ts';
import { effectsOf } from '../helpers/mcp-servers.ts';
import { mcpRunSetup, RESUME, TASK, toolResultSent } from '../helpers/mcp-run.ts';

async function labelsOfAWholeRun(): Promise<string[]> {
  const setup = await mcpRunSetup();
  try {
    const run = await setup.run([...TASK, '--verbose', '--plain']);
    if (run.code !== 0) throw new Error(run.stderr);
    // The saves, printed with --verbose; a tool's return is a crash point between two saves, after each checkpoint A.
    const saves = [...run.stderr.matchAll(/^\[save\] (\S+) /gm)].map((m) => m[1]!);
    return saves.flatMap((label) => (label.startsWith('after-save-a:') ? [label, label.replace('save-a', 'tool-return')] : [label]));
  } finally {
    await setup.stop();
  }
}

const LABELS = await labelsOfAWholeRun();
console.log(`[mcp sigkill] ${LABELS.length} crash labels in a run of four MCP calls`);

const CALLS: Record<string, [string, string]> = {
  '1': ['toolu_01', 'mcp__local__append_line'],
  '2': ['toolu_02', 'mcp__api__set_value'],
  '3': ['toolu_03', 'mcp__local__bump'],
  '4': ['toolu_04', 'mcp__api__lookup'],
};

/** The reconcile line a resume prints after a kill at this label (null: nothing was open). */
function expectedReconcile(label: string): string | null {
  const [, point, n] = /^after-([a-z-]+):(\d+)$/.exec(label)!;
  const call = CALLS[n!];
  if (!call || !['save-a', 'tool-return', 'effect-write'].includes(point!)) return null;
  const [id, name] = call;
  const phrase =
    point === 'effect-write'
      ? 'ledger hit, reusing result, not re-running'
      : {
          mcp__local__append_line:
            point === 'save-a'
              ? 'ledger miss with side effects, verified as not done, running it now'
              : 'ledger miss with side effects, verified as done, not re-running',
          mcp__api__set_value: 'ledger miss, idempotent tool, re-running',
          mcp__local__bump: 'ledger miss with side effects, unresolvable, appending is_error',
          mcp__api__lookup: 'ledger miss, read-only tool, re-running',
        }[name]!;
  return `[resume][reconcile] tool_use_id=${id} name=${name} ${phrase}`;
}

describe('SIGKILL at every crash label while MCP calls run', () => {
  it('lists the labels of a whole run', () => {
    expect(LABELS).toEqual(expect.arrayContaining(['after-save-a:1', 'after-tool-return:4', 'after-effect-write:2', 'after-save-done:1']));
  });

  it.concurrent.each(LABELS)('%s: killed, resumed, done; each effect as often as its rule allows', async (label) => {
    const setup = await mcpRunSetup();
    try {
      const killed = await setup.run(TASK, { CRASH_AFTER: label, CRASH_MODE: 'sigkill' });
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      const resumed = await setup.run([...RESUME, '--plain']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('[done] All four done.');
      const reconcile = expectedReconcile(label);
      if (reconcile) expect(resumed.stdout).toContain(`${reconcile}\n`);
      else expect(resumed.stdout).not.toContain('[reconcile]');

      expect(effectsOf(setup.effects, 'append_line')).toHaveLength(1);
      expect(effectsOf(setup.effects, 'set_value').length).toBeGreaterThanOrEqual(1);
      const bumps = effectsOf(setup.effects, 'bump').length;
      expect(bumps).toBeLessThanOrEqual(1);
      if (label === 'after-save-a:3' || label === 'after-tool-return:3') {
        // The state is unknown to the resume: the model is told, bump is not run again.
        expect(toolResultSent(setup.model, 'toolu_03')).toMatchObject({ is_error: true });
        expect(JSON.stringify(toolResultSent(setup.model, 'toolu_03'))).toContain('is unknown');
        expect(bumps).toBe(label === 'after-save-a:3' ? 0 : 1);
        expect(resumed.stderr).toContain('[resume][reconcile] toolu_03: rule no-verify: no readOnlyHint from MCP server "local" (MCP assumes false)');
      } else {
        expect(bumps).toBe(1);
      }
      if (label === 'after-save-a:2') {
        const rule = 're-ran-idempotent toolu_02 (rule idempotent: idempotentHint: true from MCP server "api")';
        expect(resumed.stderr).toContain('[resume][reconcile] toolu_02: rule idempotent: idempotentHint: true from MCP server "api"');
        expect((await runCliAsync(['history'], { cwd: setup.dir })).stdout).toContain(rule);
        expect((await runCliAsync(['status'], { cwd: setup.dir })).stdout).toMatch(new RegExp(`reconciled\\s+${rule.replace(/[()]/g, '\\$&')}`));
      }
      // Every call, first or repeated, carried the same key for the same tool_use_id.
      const keys = effectsOf(setup.effects, 'set_value').map((e) => e.key);
      expect(new Set(keys).size).toBe(1);
    } finally {
      await setup.stop();
    }
  }, 120_000);
});
