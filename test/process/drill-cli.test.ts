/**
 * `durable-agent drill` as a user runs it, on an agent module written for it (not the demo):
 * every crash point walked, the side effect without verify reported "unknown state" (exit 0),
 * the same tool declared idempotent caught running twice (exit 1), a report written as Markdown
 * and JSON, the replies of a stored run played instead of a script, and bad input refused
 * (exit 2) with nothing run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineAgent, defineTool, FileRuns, startRun } from '../../src/index.ts';
import { scriptedModel } from '../../src/testing.ts';
import { scriptReplies } from '../../src/drill/drill-script.ts';
import { REPO, runCliAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const AGENTS = path.join(REPO, 'test', 'fixtures', 'agents');
const MODULE = path.join(AGENTS, 'drill-agent.mjs');
const REPLIES = path.join(AGENTS, 'drill-replies.json');

/** A folder holding the run invoice-1: the replies of the script, to tools of the same names that answer "ok". */
async function storedRun(): Promise<string> {
  const dir = tempDir();
  const tool = (name: string, readOnly: boolean) => defineTool({ name, description: name, inputSchema: { type: 'object' }, readOnly, run: () => 'ok' });
  const recorded = defineAgent({
    name: 'billing',
    model: scriptedModel(scriptReplies(JSON.parse(fs.readFileSync(REPLIES, 'utf8')), 'replies'), { name: 'scripted' }),
    tools: [tool('read_balance', true), tool('send_invoice', false), tool('charge_card', false)],
  });
  await startRun({ agent: recorded, store: new FileRuns(path.join(dir, '.durable-agent')).store('invoice-1'), task: 'Invoice ACME and charge it.' });
  return dir;
}

describe('durable-agent drill', () => {
  it('walks every crash point: the side effect without verify is "unknown state" at 2 points, exit 0; a report beside', async () => {
    const cwd = tempDir();
    const run = await runCliAsync(['drill', '--agents', MODULE, '--replies-file', REPLIES, '--out', 'drill-report.md'], { cwd });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^drill of billing \(version [0-9a-f]{12}\) on .*drill-replies\.json: \d+ crash points/m);
    expect(run.stdout).toContain('charge_card (side effect): unknown state told to the model at 2 points; once (the ledger had its result) at 1 point');
    expect(run.stdout).toMatch(/advice: after a kill the model is told its state is unknown: add verify/);
    expect(run.stdout).toContain('send_invoice (side effect): once (the ledger had its result) at 1 point; once (verify said it had happened) at 1 point; once (verify said it had not happened; it ran) at 1 point');
    expect(run.stdout).toContain('read_balance (read-only): once (the ledger had its result) at 1 point; ran again (read-only) at 2 points');
    const progress = run.stderr.split('\n').filter((line) => line.startsWith('[drill] '));
    expect(progress.filter((line) => !line.includes('real SIGKILL'))).toHaveLength(Number(/(\d+) crash points/.exec(run.stdout)![1]));
    // Three points played again in processes of their own, killed by the kernel: as simulated.
    expect(progress.filter((line) => line.includes('with a real SIGKILL: as simulated'))).toHaveLength(3);
    expect(run.stdout).toMatch(/real SIGKILL at 3 sampled points \(after-tool-return:1, after-effect-write:2, after-save-done:1\): each as simulated/);
    const markdown = fs.readFileSync(path.join(cwd, 'drill-report.md'), 'utf8');
    expect(markdown).toContain('# Crash drill of billing');
    expect(markdown).toContain('| after-tool-return:3 | charge_card | toolu_3 | unknown-reported | unknown state told to the model | 1 |');
    const report = JSON.parse(fs.readFileSync(path.join(cwd, 'drill-report.json'), 'utf8'));
    expect(report).toMatchObject({ agent: 'billing', ranTwice: false, exitCode: 0 });
    // The tools ran in scratch folders, not in the folder the command was run in.
    expect(fs.existsSync(path.join(cwd, 'charge_card.log'))).toBe(false);
  });

  it('catches a non-idempotent tool declared idempotent: RAN TWICE, exit 1, and so does a real SIGKILL there', async () => {
    const run = await runCliAsync(['drill', '--agents', MODULE, '--replies-file', REPLIES, '--json', '--sigkill-points', '7'], { cwd: tempDir(), env: { DRILL_CHARGE_IDEMPOTENT: '1' } });
    expect(run.code, run.stderr).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report.calls.filter((call: { outcome: string }) => call.outcome === 'ran-twice').map((call: { point: string; tool: string }) => [call.point, call.tool])).toEqual([['after-tool-return:3', 'charge_card']]);
    const killed = report.sigkill as Array<{ point: string; agrees: boolean; problem: string | null; effects: Record<string, number> }>;
    expect(killed).toHaveLength(7);
    expect(killed.every((point) => point.agrees && point.problem === null)).toBe(true);
    expect(killed.find((point) => point.point === 'after-tool-return:3')!.effects['toolu_3']).toBe(2);
  });

  it('plays the replies a stored run received (--from-run ID --dir DIR)', async () => {
    const dir = await storedRun();
    const run = await runCliAsync(['drill', '--agents', MODULE, '--from-run', 'invoice-1', '--dir', dir], { cwd: tempDir() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/on the run invoice-1 in .*: \d+ crash points/);
    expect(run.stdout).toContain('charge_card (side effect): unknown state told to the model at 2 points');
  });

  it('refuses bad input with exit 2 and the reason, running nothing', async () => {
    const cwd = tempDir();
    const badScript = path.join(cwd, 'bad.json');
    fs.writeFileSync(badScript, JSON.stringify([{ stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'toolu_1', name: 'wire_money', input: {} }] }]));
    fs.writeFileSync(path.join(cwd, 'not-json.json'), '{ nope');
    for (const [args, why] of [
      [['--agents', path.join(AGENTS, 'no-agents.mjs'), '--replies-file', REPLIES], /exports no agent definition/],
      [['--agents', MODULE, '--replies-file', badScript], /calls wire_money, which the agent billing does not have/],
      [['--agents', MODULE, '--replies-file', 'not-json.json'], /cannot be read as JSON/],
      [['--agents', MODULE, '--from-run', 'nope', '--dir', cwd], /there is no such run/],
      [['--agents', MODULE], /needs the replies to play/],
      [['--agents', MODULE, '--agent', 'refunds', '--replies-file', REPLIES], /has no agent named refunds/],
    ] as const) {
      const run = await runCliAsync(['drill', ...args], { cwd });
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toMatch(why);
    }
    expect(fs.readdirSync(cwd).sort()).toEqual(['bad.json', 'not-json.json']);
  });
});

describe('durable-agent replay', () => {
  it('reports no divergence against the same code, and names a changed schema and a new approval rule (exit 1)', async () => {
    const dir = await storedRun();
    const journal = fs.readFileSync(path.join(dir, '.durable-agent', 'runs', 'invoice-1', 'journal.jsonl'));
    const same = await runCliAsync(['replay', '--agents', MODULE, '--from-run', 'invoice-1', '--dir', dir], { cwd: tempDir() });
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).toMatch(/^replay of the run invoice-1 against billing version [0-9a-f]{12} \(it started with version [0-9a-f]{12}\): 3 recorded calls$/m);
    expect(same.stdout).toContain('no divergence');

    const changed = await runCliAsync(['replay', '--agents', MODULE, '--from-run', 'invoice-1', '--dir', dir, '--json'], { cwd: tempDir(), env: { DRILL_INVOICE_SCHEMA: 'v2', DRILL_APPROVAL: '1' } });
    expect(changed.code, changed.stderr).toBe(1);
    const report = JSON.parse(changed.stdout) as { divergences: Array<{ kind: string; callId: string; tool: string }> };
    expect(report.divergences.map((d) => [d.kind, d.callId, d.tool])).toEqual([
      ['input-refused', 'toolu_2', 'send_invoice'],
      ['would-wait-for-a-person', 'toolu_3', 'charge_card'],
    ]);
    const words = await runCliAsync(['replay', '--agents', MODULE, '--from-run', 'invoice-1', '--dir', dir], { cwd: tempDir(), env: { DRILL_INVOICE_SCHEMA: 'v2' } });
    expect(words.stdout).toMatch(/toolu_2 send_invoice: today's input schema refuses the recorded input \(.*currency.*\)/);
    // Only read: the stored run is as it was.
    expect(fs.readFileSync(path.join(dir, '.durable-agent', 'runs', 'invoice-1', 'journal.jsonl')).equals(journal)).toBe(true);
  });

  it('with --run-tools, runs the recorded calls with today\'s tools in a scratch folder and names a different result', async () => {
    const dir = await storedRun();
    const cwd = tempDir();
    const run = await runCliAsync(['replay', '--agents', MODULE, '--from-run', 'invoice-1', '--dir', dir, '--run-tools', '--json'], { cwd });
    expect(run.code, run.stderr).toBe(1);
    const report = JSON.parse(run.stdout) as { divergences: Array<{ kind: string; tool: string; recorded: string; now: string }> };
    expect(report.divergences.find((d) => d.tool === 'read_balance')).toMatchObject({ kind: 'result-differs', recorded: '"ok"', now: '"acme: 120 EUR"' });
    expect(fs.readdirSync(cwd)).toEqual([]);
  });

  it('refuses a run that does not exist (exit 2)', async () => {
    const run = await runCliAsync(['replay', '--agents', MODULE, '--from-run', 'nope', '--dir', tempDir()], { cwd: tempDir() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('there is no such run');
  });
});
