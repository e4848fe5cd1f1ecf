/**
 * The console answers each caller with what its token allows: a token of tenant A does not list,
 * open, stream, decide or signal tenant B's runs (404, as if they did not exist); a read token is
 * refused every write (403); the journal's `by` for a decision is the token's name; a token
 * removed from the tokens file stops working at once; and ?tenant= narrows the list.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addToken, removeToken } from '../../src/access/tokens-file.ts';
import { type RunningConsole, startConsole } from '../../src/console/console-server.ts';
import { defineAgent, startRun } from '../../src/index.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { openRunsFolder } from '../../src/store/open-store.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const OWN = 'cy:console-tenants-token-0123456789';

let server: RunningConsole;
let tokensFile: string;
let root: string;
const tokens: Record<string, string> = {};

async function call(token: string, pathname: string, init: { method?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = { origin: server.origin, authorization: `Bearer ${token}` };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${server.origin}${pathname}`, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  // The live stream does not end: its head is enough.
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    await response.body?.cancel();
    return { status: response.status, json: null };
  }
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  // biome-ignore lint/suspicious/noExplicitAny: the console's JSON answers, read field by field as the page does
  return { status: response.status, json: json as any };
}

const keyOf = (runId: string) => encodeURIComponent(`0~${runId}~`);

beforeAll(async () => {
  const dir = tempDir('da-console-tenants-');
  root = path.join(dir, '.durable-agent');
  const runs = openRunsFolder(root);
  for (const [runId, tenant] of [['acme-1', 'acme'], ['globex-1', 'globex'], ['plain-1', undefined]] as const) {
    const { tools } = countingTools();
    const agent = defineAgent({ name: 'invoicer', model: scriptedModel([toolUseReply([{ id: 'toolu_send', name: 'send_email', input: { to: 'billing@example.com' } }]), endTurnReply('sent')]), tools, requireApproval: ['send_email'] });
    const started = await startRun({ agent, store: runs.store(runId), task: `Send ${runId}'s invoice`, runId, tenant, wait: false });
    expect(started.status).toBe('waiting');
  }
  tokensFile = path.join(tempDir('da-console-tokens-'), 'tokens.json');
  tokens.acme = addToken(tokensFile, { name: 'acme-ops', role: 'steer', tenant: 'acme' }).token;
  tokens.globexReader = addToken(tokensFile, { name: 'globex-audit', role: 'read', tenant: 'globex' }).token;
  tokens.reader = addToken(tokensFile, { name: 'auditor', role: 'read', tenant: null }).token;
  server = await startConsole({ roots: [root], port: 0, token: OWN, tokensFile, user: 'nobody' });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('the console with scoped tokens, over a folder', () => {
  it("lists only the caller's tenant's runs, with that tenant's counts; ?tenant= narrows a token of every tenant", async () => {
    const own = await call(OWN, '/api/runs');
    expect(own.json.rows.map((row: { runId: string }) => row.runId).sort()).toEqual(['acme-1', 'globex-1', 'plain-1']);
    expect(own.json).toMatchObject({ by: 'cy', role: 'steer', tenant: null, tenants: ['acme', 'default', 'globex'], total: 3 });
    const acme = await call(tokens.acme!, '/api/runs');
    expect(acme.json.rows.map((row: { runId: string; tenant: string }) => [row.runId, row.tenant])).toEqual([['acme-1', 'acme']]);
    expect(acme.json).toMatchObject({ by: 'acme-ops', role: 'steer', tenant: 'acme', tenants: ['acme'], total: 1, matching: 1 });
    expect(acme.json.counts.waiting).toBe(1);
    // Asking for another tenant's runs gives none, not them.
    expect((await call(tokens.acme!, '/api/runs?tenant=globex')).json).toMatchObject({ rows: [], total: 0 });
    expect((await call(tokens.acme!, '/api/runs?q=globex')).json.rows).toEqual([]);
    const filtered = await call(OWN, '/api/runs?tenant=globex&category=waiting');
    expect(filtered.json.rows.map((row: { runId: string }) => row.runId)).toEqual(['globex-1']);
    expect(filtered.json.counts.waiting).toBe(1);
  });

  it("answers 404 to a token of one tenant for another's run: open, stream, decide, signal, cancel, fork", async () => {
    const other = keyOf('globex-1');
    expect((await call(tokens.acme!, `/api/runs/${other}`)).status).toBe(404);
    expect((await call(tokens.acme!, `/api/runs/${other}/events`)).status).toBe(404);
    expect((await call(tokens.acme!, `/api/runs/${other}/decisions`, { method: 'POST', body: { toolUseId: 'toolu_send', verdict: 'approved' } })).status).toBe(404);
    expect((await call(tokens.acme!, `/api/runs/${other}/signals`, { method: 'POST', body: { name: 'go' } })).status).toBe(404);
    expect((await call(tokens.acme!, `/api/runs/${other}/cancel`, { method: 'POST', body: {} })).status).toBe(404);
    expect((await call(tokens.acme!, `/api/runs/${other}/fork`, { method: 'POST', body: { at: 1 } })).status).toBe(404);
    // The default tenant's run is another tenant's too; a key of no run answers the same.
    expect((await call(tokens.acme!, `/api/runs/${keyOf('plain-1')}`)).status).toBe(404);
    const missing = await call(tokens.acme!, `/api/runs/${keyOf('no-such-run')}`);
    expect(missing.status).toBe(404);
    expect((await call(tokens.acme!, `/api/runs/${other}`)).json).toEqual({ error: missing.json.error.replace('no-such-run', 'globex-1') });
    // Its own tenant's run opens and streams.
    expect((await call(tokens.acme!, `/api/runs/${keyOf('acme-1')}`)).status).toBe(200);
    expect((await call(tokens.acme!, `/api/runs/${keyOf('acme-1')}/events`)).status).toBe(200);
    // A read token of globex sees globex's run, and not acme's.
    expect((await call(tokens.globexReader!, `/api/runs/${other}`)).status).toBe(200);
    expect((await call(tokens.globexReader!, `/api/runs/${keyOf('acme-1')}`)).status).toBe(404);
  });

  it('refuses every write of a read token (403), and writes nothing', async () => {
    const key = keyOf('globex-1');
    for (const [token, suffix, body] of [
      [tokens.reader!, 'decisions', { toolUseId: 'toolu_send', verdict: 'approved' }],
      [tokens.globexReader!, 'decisions', { toolUseId: 'toolu_send', verdict: 'denied', reason: 'no' }],
      [tokens.reader!, 'signals', { name: 'go' }],
      [tokens.reader!, 'cancel', {}],
      [tokens.reader!, 'pause', {}],
      [tokens.reader!, 'fork', { at: 1 }],
    ] as const) {
      const refused = await call(token, `/api/runs/${key}/${suffix}`, { method: 'POST', body });
      expect(refused.status, suffix).toBe(403);
      expect(refused.json.error).toContain('only reads');
    }
    const detail = (await call(tokens.reader!, `/api/runs/${key}`)).json;
    // The page offers a read token no action: the run is read-only to it.
    expect(detail.readOnly).toBe('the token auditor only reads');
    expect((await call(OWN, `/api/runs/${key}`)).json.readOnly).toBeNull();
    expect(detail.pending.map((call: { tool_use_id: string }) => call.tool_use_id)).toEqual(['toolu_send']);
    expect(await openRunsFolder(root).store('globex-1').decisions.read()).toEqual([]);
  });

  it("records a decision of a scoped token as by the token's name", async () => {
    const decided = await call(tokens.acme!, `/api/runs/${keyOf('acme-1')}/decisions`, { method: 'POST', body: { toolUseId: 'toolu_send', verdict: 'approved' } });
    expect(decided.status, JSON.stringify(decided.json)).toBe(200);
    expect(decided.json.decision).toMatchObject({ tool_use_id: 'toolu_send', verdict: 'approved', by: 'acme-ops' });
  });

  it('lets a token removed from the file in no more, without a restart', async () => {
    const token = addToken(tokensFile, { name: 'temp', role: 'read', tenant: null }).token;
    expect((await call(token, '/api/runs')).status).toBe(200);
    removeToken(tokensFile, 'temp');
    expect((await call(token, '/api/runs')).status).toBe(403);
    expect((await call(OWN, '/api/runs')).status).toBe(200);
  });
});
