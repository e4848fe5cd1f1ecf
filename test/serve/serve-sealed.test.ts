/**
 * serve with master keys in its environment (DURABLE_AGENT_KEYS), as the command line takes
 * them: a run started through the API is sealed, over a folder and over a fleet; nothing of its
 * task is in the folder or in the fleet's tables, and the API shows the task opened with the
 * keys. Read by a server without the keys, the task is never the sealed text: it says what it needs.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TokenCheck } from '../../src/access/caller.ts';
import { defineAgent } from '../../src/agent/agent-definition.ts';
import { registerAgents } from '../../src/fleet/agent-registry.ts';
import { endTurnReply, scriptedModel } from '../../src/model/scripted-model.ts';
import { createServer } from '../../src/serve/create-server.ts';
import { folderText } from '../helpers/folder-text.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { freshDatabase, postgresAvailable, usePostgres, withDb } from '../helpers/use-postgres.ts';
import { ApiClient } from './api-client.ts';

const TOKEN = 'ana:serve-sealed-token-0123456789';
const tokens: TokenCheck = { callerOf: (header) => (header === `Bearer ${TOKEN}` ? { name: 'ana', role: 'steer', tenant: null } : null) };
const KEYS = { DURABLE_AGENT_KEYS: `k1:${randomBytes(32).toString('base64')}` };
const TASK = 'Greet the tenants of the walled garden at Elm Row.';

describe('serve with master keys', () => {
  it('over a folder: the run it starts is sealed on disk, and the API shows its task opened', async () => {
    const dir = tempDir('da-serve-sealed-');
    const greeter = defineAgent({ name: 'greeter', model: scriptedModel([endTurnReply('Hello, garden.')], { name: 'scripted-greeter' }), tools: [] });
    const running = await createServer({ dir, agents: [greeter], port: 0, tokens, env: KEYS });
    try {
      const api = new ApiClient(running.url, TOKEN);
      const started = await api.post('/v1/runs', { agent: 'greeter', task: TASK, runId: 'garden-1' });
      expect(started.status, started.text).toBe(201);
      await expect.poll(async () => (await api.get('/v1/runs/garden-1')).body.run.state, { timeout: 30_000 }).toBe('done');
      expect((await api.get('/v1/runs/garden-1')).body.run.task).toBe(TASK);
      const stored = folderText(path.join(dir, '.durable-agent'));
      expect(stored).toContain('run-key.json');
      expect(stored).not.toContain('walled garden');
      expect(stored).not.toContain('Hello, garden');
      const keyless = await createServer({ dir, agents: [greeter], port: 0, tokens, env: {}, resumeRuns: false });
      try {
        const seen = await new ApiClient(keyless.url, TOKEN).get('/v1/runs/garden-1');
        expect(seen.status, seen.text).toBe(200);
        expect(seen.text).not.toContain('walled garden');
        expect(seen.text).not.toContain('sealed:');
        expect(seen.body.run.task).toMatch(/^\(sealed with the run key rk-[0-9a-f]+: give the master key to read it\)$/);
      } finally {
        await keyless.close();
      }
    } finally {
      await running.close();
    }
  }, 60_000);
});

describe.skipIf(!postgresAvailable())('serve with master keys over a fleet', () => {
  usePostgres({ prefix: 'serve_sealed' });

  it("submits the run sealed: no table holds its task; the API shows it with the keys, and names the key without them", async () => {
    const url = await freshDatabase();
    const keyed = await createServer({ databaseUrl: url, tokens, port: 0, env: KEYS });
    const keyless = await createServer({ databaseUrl: url, tokens, port: 0, env: {} });
    try {
      await withDb(url, (db) => registerAgents(db, [defineAgent({ name: 'billing', model: 'claude-sonnet-4-5', tools: [] })], 'test'));
      const started = await new ApiClient(keyed.url, TOKEN).post('/v1/runs', { agent: 'billing', task: TASK, runId: 'garden-fleet' });
      expect(started.status, started.text).toBe(201);
      expect(started.body.run.task).toBe(TASK);
      const again = await new ApiClient(keyed.url, TOKEN).post('/v1/runs', { agent: 'billing', task: TASK, runId: 'garden-fleet' });
      expect(again.status, again.text).toBe(200);
      const tables = await withDb(url, async (db) => {
        const names = (await db.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE tablename LIKE 'da\\_%'")).rows.map((row) => row.tablename);
        const texts = await Promise.all(names.map(async (name) => JSON.stringify((await db.query(`SELECT * FROM ${name}`)).rows)));
        return texts.join('\n');
      });
      expect(tables).toContain('garden-fleet');
      expect(tables).not.toContain('walled garden');
      const seen = (await new ApiClient(keyless.url, TOKEN).get('/v1/runs/garden-fleet')).body.run.task as string;
      expect(seen).not.toContain('walled garden');
      expect(seen).not.toMatch(/^sealed:/);
      expect(seen).toContain('k1');
    } finally {
      await Promise.all([keyed.close(), keyless.close()]);
    }
  }, 60_000);
});
