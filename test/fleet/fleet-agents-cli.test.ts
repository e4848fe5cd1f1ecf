/**
 * A user's own agents module in a fleet of real worker processes: `worker --agents FILE` loads it
 * with plain node, `submit --agent NAME --task TEXT --run ID` queues its tasks by id; with two
 * workers, one SIGKILLed mid-run, every run ends done and every invoice went out once. A worker
 * with another version of the agent leaves the old runs waiting, and status says for what. A
 * module that cannot give agents stops the worker (exit 2) before it claims anything.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { listQueuedRuns as listRuns } from '../../src/fleet/run-queue.ts';
import { claimRun } from '../../src/store/pg/leases.ts';
import { REPO, runCliAsync, startCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres, withDb } from '../helpers/use-postgres.ts';

const AGENTS = path.join(REPO, 'test', 'fixtures', 'agents');
const MODULE = path.join(AGENTS, 'billing-agents.mjs');

/** Executions of send_invoice by idempotency key, from the module's audit log. */
function executions(outbox: string): Map<string, number> {
  const file = path.join(outbox, 'audit.log');
  const counts = new Map<string, number>();
  if (!fs.existsSync(file)) return counts;
  for (const line of fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const key = line.split(' ')[0]!;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

describe.skipIf(!postgresAvailable())('durable-agent worker --agents, submit --agent', () => {
  usePostgres({ prefix: 'agents_cli' });

  it('30 runs by id, two workers, one SIGKILLed mid-run: all done, each invoice once; the same submit again creates nothing', async () => {
    const url = await freshDatabase();
    const outbox = tempDir();
    const env = { BILLING_OUTBOX: outbox, BILLING_PACE_MS: '40' };
    const cli = (args: string[]) => runCliAsync(args, { cwd: tempDir(), env });
    const worker = () => startCli(['worker', '--database-url', url, '--agents', MODULE, '--lease', '1s', '--poll-interval', '100ms', '--run-concurrency', '3'], { cwd: tempDir(), env });

    // No worker has registered the agent yet: refused, unless asked.
    const early = await cli(['submit', '--database-url', url, '--agent', 'billing', '--task', 'Invoice ACME.', '--run', 'inv-00']);
    expect(early.code).toBe(2);
    expect(early.stderr).toContain('--allow-unknown-agent');
    const first = await cli(['submit', '--database-url', url, '--agent', 'billing', '--task', 'Invoice ACME.', '--run', 'inv-00', '--allow-unknown-agent']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim()).toBe('inv-00');
    // Its next steps name this database, never a placeholder for it.
    expect(first.stderr).toMatch(/its result: .*durable-agent result --run inv-00 --wait --database-url (\S+)$/m);
    expect(/--database-url (\S+)$/m.exec(first.stderr)![1]!.replace(/^'|'$/g, '')).toBe(url);
    expect(first.stderr).not.toContain('--database-url URL');

    // A worker drives the first run and registers the agent; the submits after it need no flag.
    const registering = await runCliAsync(['worker', '--database-url', url, '--agents', MODULE, '--exit-when-idle'], { cwd: tempDir(), env });
    expect(registering.stdout).toContain('drives demo, billing@');
    const ids = Array.from({ length: 30 }, (_, i) => `inv-${String(i).padStart(2, '0')}`);
    for (const id of ids.slice(1)) {
      const submitted = await cli(['submit', '--database-url', url, '--agent', 'billing', '--task', `Invoice C${id.slice(4)}.`, '--run', id]);
      expect(submitted.code, submitted.stderr).toBe(0);
    }
    const again = await cli(['submit', '--database-url', url, '--agent', 'billing', '--task', 'Invoice C05.', '--run', 'inv-05']);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('nothing new was queued');
    const other = await cli(['submit', '--database-url', url, '--agent', 'billing', '--task', 'Invoice someone else.', '--run', 'inv-05']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('task');

    const a = worker();
    const b = worker();
    await vi.waitFor(() => expect(a.output().includes('claimed') && b.output().includes('claimed'), 'both workers are driving runs').toBe(true), { timeout: 60_000, interval: 50 });
    a.child.kill('SIGKILL');
    await a.done;
    await withDb(url, async (db) => {
      await vi.waitFor(async () => expect((await listRuns(db)).every((run) => run.state === 'done'), 'every run is done').toBe(true), { timeout: 90_000, interval: 50 });
      const runs = await listRuns(db);
      expect(runs.map((run) => run.id).sort()).toEqual(ids);
      expect(new Set(runs.map((run) => run.agentVersion)).size).toBe(1);
    });
    b.child.kill('SIGTERM');
    await b.done;
    // The killed worker held runs: the other took them over (a later lease epoch).
    expect(b.output(), b.output()).toMatch(/claimed \(lease epoch ([2-9]|\d{2,})\)/);
    const counts = executions(outbox);
    expect(counts.size).toBe(30);
    expect([...counts.values()].every((count) => count === 1)).toBe(true);
    const status = await cli(['status', '--database-url', url]);
    expect(status.stdout).toMatch(/^inv-00 +done .* billing@[0-9a-f]{12}$/m);
  }, 180_000);

  it('status tells a run a worker has taken but not yet started from one still in the queue', async () => {
    const url = await freshDatabase();
    const cli = (args: string[]) => runCliAsync(args, { cwd: tempDir(), env: {} });
    for (const id of ['taken-1', 'waiting-1']) expect((await cli(['submit', '--database-url', url, '--agent', 'billing', '--task', `Invoice ${id}.`, '--run', id, '--allow-unknown-agent'])).code).toBe(0);
    // A worker's claim, before its first record: the lease is held, the state still the queue's.
    await withDb(url, (db) => claimRun(db, 'taken-1', 'worker-7', 60_000));
    const status = await cli(['status', '--database-url', url]);
    expect(status.code, status.stderr).toBe(0);
    const line = (id: string) => status.stdout.split('\n').find((row) => row.startsWith(`${id} `)) ?? '';
    expect(line('taken-1')).toMatch(/queued \(taken by worker-7, starting\)/);
    expect(line('taken-1')).toContain('worker-7');
    expect(line('waiting-1')).not.toContain('taken by');
  });

  it('a worker with a changed tool schema leaves the runs of the old version waiting, says so, and a worker with it finishes them', async () => {
    const url = await freshDatabase();
    const outbox = tempDir();
    const env = { BILLING_OUTBOX: outbox };
    const cli = (args: string[], extra: Record<string, string> = {}) => runCliAsync(args, { cwd: tempDir(), env: { ...env, ...extra } });
    const runWorker = (extra: Record<string, string> = {}) => cli(['worker', '--database-url', url, '--agents', MODULE, '--poll-interval', '100ms', '--exit-when-idle'], extra);
    await cli(['submit', '--database-url', url, '--agent', 'billing', '--task', 'Invoice ACME.', '--run', 'old', '--max-turns', '1', '--allow-unknown-agent']);
    expect((await runWorker()).code).toBe(0);
    expect((await cli(['raise', '--database-url', url, '--run', 'old', '--max-turns', '10'])).code).toBe(0);
    // Forget that the old version was ever registered: its workers are gone.
    await withDb(url, (db) => db.query('DELETE FROM da_agents'));

    const changed = await runWorker({ BILLING_VARIANT: 'cc' });
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stdout).not.toContain('claimed');
    const status = await cli(['status', '--database-url', url]);
    expect(status.stdout).toMatch(/old +stoppedAtMaxTurns \(raised: .*\)/);
    const listed = JSON.parse((await cli(['status', '--database-url', url, '--json'])).stdout) as Array<{ id: string; waitsForAgent: string | null; agentVersion: string }>;
    expect(listed[0]!.waitsForAgent).toMatch(new RegExp(`^a worker with billing at version ${listed[0]!.agentVersion}, which it started with \\(registered: [0-9a-f]{12}\\)$`));

    const original = await runWorker();
    expect(original.stdout).toContain('run old: done: Invoiced ACME.');
    expect(executions(outbox).size).toBe(1);
  }, 120_000);

  it('refuses a module that cannot be loaded, exports no agent or two of one name (exit 2, the file and why), claiming nothing', async () => {
    const url = await freshDatabase();
    for (const [file, why] of [
      ['broken.mjs', /could not be loaded \(Error: cannot reach the billing service\)/],
      ['no-agents.mjs', /exports no agent definition \(exports: notAnAgent\)/],
      ['twice.mjs', /exports two agents named billing/],
      ['missing.mjs', /there is no such file/],
    ] as const) {
      const run = await runCliAsync(['worker', '--database-url', url, '--agents', path.join(AGENTS, file), '--exit-when-idle'], { cwd: tempDir() });
      expect(run.code, `${file}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toMatch(why);
      expect(run.stderr).toContain(file);
    }
    const bad = await runCliAsync(['submit', '--database-url', url, '--agent', 'billing', '--task', 'x', '--count', '3'], { cwd: tempDir() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--count is for demo runs');
    const neither = await runCliAsync(['submit', '--database-url', url], { cwd: tempDir() });
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('submit needs --agent NAME --task TEXT');
  });
});
