/**
 * The console over a fleet on a real PostgreSQL and two file runs: twenty submitted runs driven
 * by a real worker process, some waiting for approval, all listed with the right states beside
 * the folder's runs, each with its agent and its tool; one approved through the console, which a
 * worker then finishes.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningConsole, startConsole } from '../../src/console/console-server.ts';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

const TOKEN = 'cy:console-fleet-token-0123456789';

describe.skipIf(!postgresAvailable())('the console over a fleet', () => {
  usePostgres({ prefix: 'console' });
  let server: RunningConsole | null = null;
  const pools: Array<{ end(): Promise<void> }> = [];

  afterAll(async () => {
    await server?.close();
    for (const pool of pools) await pool.end();
  });

  it('lists 20 fleet runs and 2 file runs with their states, and an approval from it is taken up by a worker', async () => {
    const url = await freshDatabase();
    const cli = (args: string[]) => runCliAsync(args, { cwd: tempDir() });
    expect((await cli(['db', 'migrate', '--database-url', url])).code).toBe(0);
    const plain = await cli(['submit', 'demo', '--database-url', url, '--count', '16']);
    const asking = await cli(['submit', 'demo', '--database-url', url, '--count', '4', '--require-approval', 'write_report']);
    expect([plain.code, asking.code], `${plain.stderr}${asking.stderr}`).toEqual([0, 0]);
    const waitingIds = asking.stdout.trim().split('\n');
    const worker = () => cli(['worker', '--database-url', url, '--lease-ms', '1500', '--poll-ms', '100', '--exit-when-idle']);
    expect((await worker()).code).toBe(0);

    const dir = tempDir('da-console-fleet-');
    const [done, waiting] = await Promise.all([
      runCliAsync(['demo', '--run', 'file-done'], { cwd: dir }),
      runCliAsync(['demo', '--run', 'file-wait', '--require-approval', 'write_report', '--no-wait'], { cwd: dir }),
    ]);
    expect([done.code, waiting.code]).toEqual([0, 7]);

    const pool = await openDatabase(url, 3);
    pools.push(pool);
    server = await startConsole({ roots: [path.join(dir, '.durable-agent')], pool, port: 0, token: TOKEN, user: 'nobody' });
    const headers = { authorization: `Bearer ${TOKEN}`, origin: server.origin, 'content-type': 'application/json' };
    const list = (await (await fetch(`${server.origin}/api/runs`, { headers })).json()) as { rows: Array<{ key: string; runId: string; source: string; category: string; state: string; waitsFor: string | null; leaseEpoch: number | null; worker: string | null; turn: number; tokens: number | null; agent: { name: string; version: string | null } | null; tool: string | null }>; counts: Record<string, number> };
    expect(list.rows).toHaveLength(22);
    const fleet = list.rows.filter((row) => row.source === 'fleet');
    expect(fleet).toHaveLength(20);
    expect(fleet.filter((row) => row.category === 'waiting').map((row) => row.runId).sort()).toEqual([...waitingIds].sort());
    expect(fleet.filter((row) => row.category === 'done')).toHaveLength(16);
    for (const row of fleet.filter((r) => r.category === 'waiting')) expect(row).toMatchObject({ state: 'awaitingDecision', waitsFor: 'toolu_03', worker: null, turn: 3 });
    for (const row of fleet) expect(row.leaseEpoch).toBeGreaterThan(0);
    // The agent that drives each run, and the tool it waits on or called last (from its latest turn that called one).
    for (const row of fleet) expect(row).toMatchObject({ agent: { name: 'demo', version: null }, tool: 'write_report' });
    expect(list.rows.find((row) => row.runId === 'file-wait')).toMatchObject({ agent: { name: 'demo', version: null }, tool: 'write_report' });
    // Tokens from each run's latest record that carries its usage, the same as the folder run's.
    const fileTokens = list.rows.find((row) => row.runId === 'file-done')!.tokens;
    for (const row of fleet.filter((r) => r.category === 'done')) expect(row.tokens).toBe(fileTokens);
    for (const row of fleet) expect(row.tokens).toBeGreaterThan(0);
    expect(list.counts).toMatchObject({ waiting: 5, done: 17 });

    const chosen = fleet.find((row) => row.runId === waitingIds[0])!;
    const detail = (await (await fetch(`${server.origin}/api/runs/${encodeURIComponent(chosen.key)}`, { headers })).json()) as { pending: Array<{ tool_use_id: string }>; transcript: Array<{ kind: string }> };
    expect(detail.pending.map((call) => call.tool_use_id)).toEqual(['toolu_03']);
    expect(detail.transcript.at(-1)).toMatchObject({ kind: 'open-call', waitsFor: 'approval' });
    const approved = await fetch(`${server.origin}/api/runs/${encodeURIComponent(chosen.key)}/decisions`, { method: 'POST', headers, body: JSON.stringify({ toolUseId: 'toolu_03', verdict: 'approved' }) });
    expect(approved.status, await approved.clone().text()).toBe(200);
    expect((await worker()).code).toBe(0);
    const after = (await (await fetch(`${server.origin}/api/runs?category=waiting`, { headers })).json()) as { rows: Array<{ runId: string }> };
    expect(after.rows.map((row) => row.runId)).not.toContain(chosen.runId);
    const finished = (await (await fetch(`${server.origin}/api/runs/${encodeURIComponent(chosen.key)}`, { headers })).json()) as { summary: { state: string }; status: { decided: Array<{ by: string; verdict: string }> } };
    expect(finished.summary.state).toBe('done');
    expect(finished.status.decided).toMatchObject([{ by: 'cy', verdict: 'approved' }]);
  });
});
