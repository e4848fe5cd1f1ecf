/**
 * Whose a run is, in a folder of runs: pinned in its header when it starts, kept on resume, shown
 * by status and list (and filtered by list --tenant), inherited by the runs its sub-agent calls
 * start; a run started without one is the default tenant's and its header says nothing; a name
 * that cannot be a tenant's is refused before anything is written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { childRunIdOf, FileRuns, listRuns, startRun, subagentTool } from '../../src/index.ts';
import { TenantError } from '../../src/core/tenant.ts';
import { runCli } from '../../src/cli/main.ts';
import { scriptedModel, endTurnReply } from '../../src/testing.ts';
import { editorAgent, writerAgent } from '../helpers/subagent-agents.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { REPO, runCliAsync } from '../helpers/cli.ts';

function cliWriters() {
  const out: string[] = [];
  return { out, writers: { out: (line: string) => out.push(line), err: (line: string) => out.push(`ERR ${line}`) } };
}

const answer = () => scriptedModel([endTurnReply('done')], { name: 'scripted' });

describe('tenants of folder runs', () => {
  it('pins the tenant, shows it in status and list, filters list by it; the default tenant writes nothing in the header', async () => {
    const dir = tempDir();
    const runs = new FileRuns(path.join(dir, '.durable-agent'));
    await startRun({ store: runs.store('acme-1'), runId: 'acme-1', model: answer(), tools: [], task: 'For ACME.', tenant: 'acme' });
    await startRun({ store: runs.store('plain-1'), runId: 'plain-1', model: answer(), tools: [], task: 'For nobody in particular.' });
    await startRun({ store: runs.store('globex-1'), runId: 'globex-1', model: answer(), tools: [], task: 'For Globex.', tenant: 'globex' });

    const header = (id: string) => JSON.parse(fs.readFileSync(path.join(dir, '.durable-agent', 'runs', id, 'journal.jsonl'), 'utf8').split('\n')[0]!.slice(9));
    expect(header('acme-1').tenant).toBe('acme');
    expect(header('plain-1')).not.toHaveProperty('tenant');

    const all = await listRuns(runs);
    expect(Object.fromEntries(all.map((run) => [run.runId, run.tenant]))).toEqual({ 'acme-1': 'acme', 'plain-1': 'default', 'globex-1': 'globex' });
    expect((await listRuns(runs, { tenant: 'acme' })).map((run) => run.runId)).toEqual(['acme-1']);
    expect((await listRuns(runs, { tenant: 'default' })).map((run) => run.runId)).toEqual(['plain-1']);

    const list = cliWriters();
    expect(await runCli(['list', '--dir', dir, '--tenant', 'globex'], {}, list.writers)).toBe(0);
    expect(list.out[0]).toMatch(/ tenant$/);
    expect(list.out.join('\n')).toContain('globex-1');
    expect(list.out.join('\n')).not.toContain('acme-1');
    const json = cliWriters();
    await runCli(['list', '--dir', dir, '--json'], {}, json.writers);
    expect(JSON.parse(json.out.join('\n')).map((run: { tenant: string }) => run.tenant).sort()).toEqual(['acme', 'default', 'globex']);

    const status = cliWriters();
    expect(await runCli(['status', '--dir', dir, '--run', 'acme-1'], {}, status.writers)).toBe(0);
    expect(status.out.join('\n')).toMatch(/^tenant +acme$/m);
    const plain = cliWriters();
    await runCli(['status', '--dir', dir, '--run', 'plain-1'], {}, plain.writers);
    expect(plain.out.join('\n')).not.toMatch(/^tenant/m);
  });

  it('refuses a name that cannot be a tenant, writing nothing', async () => {
    const dir = tempDir();
    const runs = new FileRuns(path.join(dir, '.durable-agent'));
    for (const tenant of ['', '../etc', 'a b', 'x'.repeat(65)]) {
      await expect(startRun({ store: runs.store('r'), runId: 'r', model: answer(), tools: [], task: 't', tenant })).rejects.toThrow(TenantError);
    }
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'runs', 'r', 'journal.jsonl'))).toBe(false);
  });

  it("the runs a sub-agent call starts are their parent's tenant's", async () => {
    const dir = tempDir();
    const runs = new FileRuns(path.join(dir, '.durable-agent'));
    const parent = editorAgent([subagentTool(writerAgent(dir))]);
    const result = await startRun({ agent: parent, store: runs.store('editor-1'), runId: 'editor-1', task: 'Write two notes.', tenant: 'acme' });
    expect(result.status).toBe('done');
    const children = (await listRuns(runs)).filter((run) => run.calledBy?.runId === 'editor-1');
    expect(children.map((run) => run.runId).sort()).toEqual([childRunIdOf('editor-1', 'toolu_a'), childRunIdOf('editor-1', 'toolu_b')].sort());
    expect(children.every((run) => run.tenant === 'acme')).toBe(true);
  });

  it('run --tenant pins it from the command line; a resume refuses --tenant, the run keeps its own', async () => {
    const dir = tempDir();
    const env = { BILLING_OUTBOX: path.join(dir, 'outbox') };
    const module = path.join(REPO, 'test', 'fixtures', 'agents', 'billing-agents.mjs');
    const started = await runCliAsync(['run', '--agents', module, '--agent', 'billing', '--task', 'Invoice ACME.', '--tenant', 'acme', '--dir', dir, '--plain'], { cwd: dir, env });
    expect(started.code, started.stderr).toBe(0);
    const [run] = JSON.parse((await runCliAsync(['list', '--dir', dir, '--json'], { cwd: dir })).stdout) as { runId: string; tenant: string }[];
    expect(run!.tenant).toBe('acme');
    const status = await runCliAsync(['status', '--dir', dir, '--run', run!.runId], { cwd: dir });
    expect(status.stdout).toMatch(/^tenant +acme$/m);
    const refused = await runCliAsync(['run', '--agents', module, '--agent', 'billing', '--resume', '--run', run!.runId, '--tenant', 'globex', '--dir', dir], { cwd: dir, env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--tenant is pinned when a run starts');
  });
});
