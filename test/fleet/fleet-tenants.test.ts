/**
 * Whose a fleet run is: submit --tenant keeps it in the run's spec, the worker that starts the run
 * pins it in the header, the children its sub-agent calls queue are the same tenant's, list
 * --tenant shows only that tenant's runs, and a re-submit under another tenant is refused.
 */
import { describe, expect, it } from 'vitest';
import { subagentTool } from '../../src/index.ts';
import { listRuns } from '../../src/fleet/list-runs.ts';
import { submitRun } from '../../src/fleet/submit-run.ts';
import { Worker } from '../../src/fleet/worker.ts';
import { RunIdTakenError } from '../../src/runtime/attach-run.ts';
import { TenantError } from '../../src/core/tenant.ts';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { editorAgent, writerAgent } from '../helpers/subagent-agents.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

describe.skipIf(!postgresAvailable())('tenants in a fleet', () => {
  usePostgres({ connections: 2, prefix: 'tenants' });

  it("a run and the children its calls queue are its tenant's: pinned, listed and filtered", async () => {
    const dir = tempDir('da-fleet-tenants-');
    const url = await freshDatabase();
    const pool = await openDatabase(url, 6);
    try {
      const editor = editorAgent([subagentTool(writerAgent(dir))]);
      await submitRun(pool, { agent: editor, task: 'Write two notes.', runId: 'editor-acme', tenant: 'acme' });
      await submitRun(pool, { agent: editor, task: 'Write two notes.', runId: 'editor-plain' });
      await expect(submitRun(pool, { agent: editor, task: 'Write two notes.', runId: 'editor-acme', tenant: 'globex' })).rejects.toThrow(RunIdTakenError);
      await expect(submitRun(pool, { agent: editor, task: 'Write two notes.', runId: 'editor-bad', tenant: 'no way' })).rejects.toThrow(TenantError);
      const worker = new Worker({ pool, agents: [editor], runConcurrency: 2, leaseMs: 60_000, exitWhenIdle: true, pollIntervalMs: 50, log: () => {} });
      await worker.run();

      const runs = await listRuns(pool);
      expect(Object.fromEntries(runs.map((run) => [run.runId, [run.state, run.tenant]]))).toEqual({
        'editor-acme': ['done', 'acme'],
        'editor-acme.toolu_a': ['done', 'acme'],
        'editor-acme.toolu_b': ['done', 'acme'],
        'editor-plain': ['done', 'default'],
        'editor-plain.toolu_a': ['done', 'default'],
        'editor-plain.toolu_b': ['done', 'default'],
      });
      for (const id of ['editor-acme', 'editor-acme.toolu_a']) expect((await new PgRunStore(pool, id).load()).header.tenant).toBe('acme');
      expect((await new PgRunStore(pool, 'editor-plain').load()).header).not.toHaveProperty('tenant');
      expect((await listRuns(pool, { tenant: 'acme' })).map((run) => run.runId).sort()).toEqual(['editor-acme', 'editor-acme.toolu_a', 'editor-acme.toolu_b']);

      const listed = await runCliAsync(['list', '--database-url', url, '--tenant', 'acme'], { cwd: tempDir() });
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toMatch(/^run .* tenant$/m);
      expect(listed.stdout).toMatch(/^editor-acme .* acme$/m);
      expect(listed.stdout).not.toContain('editor-plain');
    } finally {
      await pool.end();
    }
  }, 90_000);

  it('submit --tenant on the command line; refused for demo runs', async () => {
    const url = await freshDatabase();
    const submitted = await runCliAsync(['submit', '--database-url', url, '--agent', 'billing', '--task', 'Invoice ACME.', '--run', 'inv-1', '--tenant', 'acme', '--allow-unknown-agent'], { cwd: tempDir() });
    expect(submitted.code, submitted.stderr).toBe(0);
    const pool = await openDatabase(url, 1);
    try {
      const [run] = await listRuns(pool);
      expect(run).toMatchObject({ runId: 'inv-1', tenant: 'acme' });
    } finally {
      await pool.end();
    }
    const demo = await runCliAsync(['submit', 'demo', '--database-url', url, '--tenant', 'acme'], { cwd: tempDir() });
    expect(demo.code).toBe(2);
    expect(demo.stderr).toContain('--tenant');
  });
});
