/**
 * A sealed run's page in the console: with the key ring in the console's environment its content
 * shows as any run's; without it the page shows what stays readable (state, turn, tools, usage,
 * the timeline, what waits) with each sealed text named "(sealed)", and says which master key it
 * needs; never a sealed string, never the content.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runDetail } from '../../src/console/run-detail.ts';
import type { ConsoleRun } from '../../src/console/run-sources.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { KeyRing, KEYS_ENV } from '../../src/seal/keys.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = randomBytes(32);
const keys = KeyRing.of([{ id: 'k1', key: KEY }]);
const TASK = 'Mail Ana Ortega the balance of account 4471';
const SECRETS = ['Ana Ortega', 'account 4471', 'ana.ortega@example.com'];

const before = process.env[KEYS_ENV];
afterAll(() => {
  if (before === undefined) delete process.env[KEYS_ENV];
  else process.env[KEYS_ENV] = before;
});

async function sealedWaitingRun(): Promise<string> {
  const dir = path.join(tempDir('da-console-sealed-'), '.durable-agent');
  const { tools } = countingTools();
  const model = scriptedModel([
    toolUseReply([{ id: 'toolu_a', name: 'lookup', input: { q: 'balance of account 4471' } }, { id: 'toolu_b', name: 'send_email', input: { to: 'ana.ortega@example.com' } }], 'Looking up Ana Ortega.'),
    endTurnReply('Ana Ortega was told.'),
  ]);
  expect((await startRun({ store: new FileStore(dir), keys, tools, model, requireApproval: ['send_email'], wait: false, task: TASK })).status).toBe('waiting');
  return dir;
}

const consoleRun = (dir: string): ConsoleRun => ({ key: 'run', source: 'folder', store: new FileStore(dir), archivedJournal: null, runDir: path.dirname(dir), folder: null });

describe("a sealed run's page", () => {
  it('with the key ring in the console environment: its content, as any run', async () => {
    const dir = await sealedWaitingRun();
    process.env[KEYS_ENV] = `k1:${KEY.toString('base64')}`;
    const detail = await runDetail(consoleRun(dir));
    expect(detail.sealed).toBeNull();
    expect(detail.summary?.task).toBe(TASK);
    expect(JSON.stringify(detail.transcript)).toContain('ana.ortega@example.com');
    expect(detail.pending.map((call) => [call.tool_use_id, call.input])).toEqual([['toolu_b', { to: 'ana.ortega@example.com' }]]);
  });

  it('without the key: what stays readable, each sealed text named, and which key it needs; nothing of the content', async () => {
    const dir = await sealedWaitingRun();
    const detail = await runDetail(consoleRun(dir), null);
    const json = JSON.stringify(detail);
    for (const secret of SECRETS) expect(json).not.toContain(secret);
    expect(json).not.toContain('sealed:1:');
    expect(detail.sealed).toMatchObject({ keyId: 'k1', message: expect.stringContaining('needs the master key "k1"') });
    expect(detail.summary).toMatchObject({ state: 'awaitingDecision', turn: 1, task: expect.stringContaining('"k1"') });
    expect(detail.summary!.tokens).toBeGreaterThan(0);
    expect(detail.steps.flatMap((step) => step.tools)).toEqual(expect.arrayContaining(['lookup', 'send_email']));
    expect(detail.ledger).toEqual([expect.objectContaining({ toolUseId: 'toolu_a', name: 'lookup', content: '(sealed)' })]);
    expect(detail.pending).toEqual([expect.objectContaining({ tool_use_id: 'toolu_b', name: 'send_email', input: '(sealed)' })]);
    expect(detail.transcript.find((entry) => entry.kind === 'text')).toMatchObject({ role: 'user', text: '(sealed)' });
  });

  it('with the keys given: opened, as the environment does', async () => {
    const dir = await sealedWaitingRun();
    const detail = await runDetail(consoleRun(dir), keys);
    expect(detail.sealed).toBeNull();
    expect(detail.summary?.task).toBe(TASK);
  });
});
