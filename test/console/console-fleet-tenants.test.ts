/**
 * Scoped tokens over a fleet on a real PostgreSQL: the list of a token of one tenant holds its
 * tenant's runs only (filtered in the query) with its tenant's counts; another tenant's run is
 * not found (404) to open, stream or decide; a read token is refused a decision (403); a
 * decision of a steering token is recorded as by the token's name.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addToken } from '../../src/access/tokens-file.ts';
import { type RunningConsole, startConsole } from '../../src/console/console-server.ts';
import { defineAgent } from '../../src/index.ts';
import { submitRun } from '../../src/fleet/submit-run.ts';
import { Worker } from '../../src/fleet/worker.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { openDatabase } from '../../src/store/pg/pool.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

describe.skipIf(!postgresAvailable())('the console over a fleet, with scoped tokens', () => {
  usePostgres({ connections: 2, prefix: 'console_tenants' });
  let server: RunningConsole | null = null;
  const pools: Array<{ end(): Promise<void> }> = [];

  afterAll(async () => {
    await server?.close();
    for (const pool of pools) await pool.end();
  });

  it("shows a tenant's token its tenant's runs only, refuses a read token's decision, and records a decision as by the token's name", async () => {
    const url = await freshDatabase();
    const pool = await openDatabase(url, 6);
    pools.push(pool);
    const { tools } = countingTools();
    const agent = defineAgent({ name: 'invoicer', model: scriptedModel([toolUseReply([{ id: 'toolu_send', name: 'send_email', input: { to: 'billing@example.com' } }]), endTurnReply('sent')]), tools, requireApproval: ['send_email'] });
    for (const [runId, tenant] of [['acme-1', 'acme'], ['acme-2', 'acme'], ['globex-1', 'globex'], ['plain-1', undefined]] as const) {
      await submitRun(pool, { agent, task: `Send ${runId}'s invoice`, runId, tenant });
    }
    const worker = new Worker({ pool, agents: [agent], runConcurrency: 4, leaseMs: 60_000, exitWhenIdle: true, pollIntervalMs: 50, log: () => {} });
    await worker.run();

    const file = path.join(tempDir('da-console-fleet-tokens-'), 'tokens.json');
    const acme = addToken(file, { name: 'acme-ops', role: 'steer', tenant: 'acme' }).token;
    const reader = addToken(file, { name: 'auditor', role: 'read', tenant: null }).token;
    const own = 'cy:console-fleet-tenants-0123456789';
    server = await startConsole({ roots: [path.join(tempDir(), '.durable-agent')], pool, port: 0, token: own, tokensFile: file, user: 'nobody' });
    const origin = server.origin;
    const call = async (token: string, pathname: string, body?: unknown) => {
      const headers: Record<string, string> = { origin, authorization: `Bearer ${token}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${origin}${pathname}`, { method: body === undefined ? 'GET' : 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) });
      if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
        await response.body?.cancel();
        return { status: response.status, json: null };
      }
      // biome-ignore lint/suspicious/noExplicitAny: the console's JSON answers, read field by field as the page does
      return { status: response.status, json: (await response.json()) as any };
    };
    const key = (runId: string) => encodeURIComponent(`fleet~${runId}`);

    const every = (await call(own, '/api/runs')).json;
    expect(every.rows.map((row: { runId: string }) => row.runId).sort()).toEqual(['acme-1', 'acme-2', 'globex-1', 'plain-1']);
    expect(every.counts.waiting).toBe(4);
    expect(every.tenants).toEqual(['acme', 'default', 'globex']);
    const mine = (await call(acme, '/api/runs')).json;
    expect(mine.rows.map((row: { runId: string; tenant: string }) => [row.runId, row.tenant]).sort()).toEqual([
      ['acme-1', 'acme'],
      ['acme-2', 'acme'],
    ]);
    expect(mine).toMatchObject({ total: 2, matching: 2, tenant: 'acme', tenants: ['acme'] });
    expect(mine.counts.waiting).toBe(2);
    // A page at a time, from the cursor: still acme's runs only.
    const first = (await call(acme, '/api/runs?limit=1')).json;
    const second = (await call(acme, `/api/runs?limit=1&after=${encodeURIComponent(first.next)}`)).json;
    expect([...first.rows, ...second.rows].map((row: { runId: string }) => row.runId).sort()).toEqual(['acme-1', 'acme-2']);
    expect(second.more).toBe(false);
    expect((await call(own, '/api/runs?tenant=globex')).json.rows.map((row: { runId: string }) => row.runId)).toEqual(['globex-1']);

    for (const suffix of ['', '/events']) expect((await call(acme, `/api/runs/${key('globex-1')}${suffix}`)).status, suffix).toBe(404);
    expect((await call(acme, `/api/runs/${key('globex-1')}/decisions`, { toolUseId: 'toolu_send', verdict: 'approved' })).status).toBe(404);
    expect((await call(acme, `/api/runs/${key('plain-1')}`)).status).toBe(404);
    expect((await call(reader, `/api/runs/${key('globex-1')}`)).status).toBe(200);
    expect((await call(reader, `/api/runs/${key('globex-1')}/decisions`, { toolUseId: 'toolu_send', verdict: 'approved' })).status).toBe(403);

    const decided = await call(acme, `/api/runs/${key('acme-1')}/decisions`, { toolUseId: 'toolu_send', verdict: 'approved' });
    expect(decided.status, JSON.stringify(decided.json)).toBe(200);
    expect(decided.json.decision).toMatchObject({ verdict: 'approved', by: 'acme-ops' });
    const detail = (await call(own, `/api/runs/${key('globex-1')}`)).json;
    expect(detail.pending.map((call: { tool_use_id: string }) => call.tool_use_id)).toEqual(['toolu_send']);
  }, 120_000);
});
