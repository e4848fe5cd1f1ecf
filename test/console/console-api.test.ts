/**
 * The console's API over HTTP, without a browser: a damaged journal shown read-only as far as it
 * reads; an edited input checked against the tool's schema on the server; cancel and pause
 * through the control inbox (a paced run in another process ends as cancelled, exit 9); a GET
 * that changes no file; no body that holds a secret the journal holds; and the refusal to listen
 * beyond loopback without a token of the user's choosing.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleTokenRequiredError } from '../../src/console/console-errors.ts';
import { type RunningConsole, startConsole } from '../../src/console/console-server.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { runCliAsync, startCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

// A key of the real shape, made up (joined here so that no key-shaped text is committed).
const SECRET = ['sk', 'ant', 'api03', 'console-api-test-secret-0123456789'].join('-');
const TOKEN = 'bo:console-api-token-0123456789';

let dir: string;
let leaky: string;
let damaged: string;
let server: RunningConsole;

interface Answer {
  status: number;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: the console's JSON answers, read field by field as the page does
  json: any;
}
const bodies: string[] = [];

async function call(pathname: string, init: { method?: string; body?: unknown; token?: string | null } = {}): Promise<Answer> {
  const headers: Record<string, string> = { origin: server.origin };
  if (init.token !== null) headers.authorization = `Bearer ${init.token ?? TOKEN}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${server.origin}${pathname}`, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  const body = await response.text();
  bodies.push(body);
  let json: unknown = null;
  try {
    json = JSON.parse(body);
  } catch {
    // the page, the script, the diagram
  }
  return { status: response.status, body, json };
}

async function keyOf(runId: string): Promise<string> {
  const row = (await call('/api/runs')).json.rows.find((candidate: { runId: string; key: string }) => candidate.runId === runId || candidate.key.endsWith(`~${runId}~`));
  expect(row, runId).toBeDefined();
  return encodeURIComponent(row.key);
}

/** Every file under a folder with a hash of its bytes: what a GET must leave as it is. */
function treeOf(root: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (at: string) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const file = path.join(at, entry.name);
      if (entry.isDirectory()) walk(file);
      else files[path.relative(root, file)] = crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
    }
  };
  walk(root);
  return files;
}

beforeAll(async () => {
  dir = tempDir('da-console-api-');
  const [waiting, other] = await Promise.all([
    runCliAsync(['demo', '--run', 'wait-1', '--require-approval', 'write_report', '--no-wait'], { cwd: dir }),
    runCliAsync(['demo', '--run', 'wait-2', '--require-approval', 'write_report', '--no-wait'], { cwd: dir }),
  ]);
  expect([waiting.code, other.code]).toEqual([7, 7]);

  // A run whose tool returned a secret: the journal holds it, no response may.
  leaky = tempDir('da-console-leaky-');
  const env = defineTool({ name: 'read_env', description: 'reads the environment', inputSchema: { type: 'object', properties: {} }, readOnly: true, run: () => `ANTHROPIC_API_KEY=${SECRET.slice(0, 12)}${SECRET.slice(12)}` });
  const result = await startRun({
    store: new FileStore(path.join(leaky, '.durable-agent')),
    model: scriptedModel([toolUseReply([{ id: 'toolu_env', name: 'read_env', input: {} }]), endTurnReply('Done.')]),
    tools: [env],
    task: 'Read the environment.',
  });
  expect(result.status).toBe('done');

  // A run whose journal is damaged inside: one byte of its fifth record changed.
  damaged = tempDir('da-console-damaged-');
  expect((await runCliAsync(['demo'], { cwd: damaged })).code).toBe(0);
  const journal = path.join(damaged, '.durable-agent', 'journal.jsonl');
  const bytes = fs.readFileSync(journal);
  const lines = bytes.toString('latin1').split('\n');
  const at = lines.slice(0, 7).join('\n').length + 1 + 20;
  bytes[at] = bytes[at] === 0x41 ? 0x42 : 0x41;
  fs.writeFileSync(journal, bytes);

  server = await startConsole({ roots: [dir, leaky, damaged].map((d) => path.join(d, '.durable-agent')), port: 0, token: TOKEN, user: 'nobody', secrets: [SECRET] });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('the console API', () => {
  it('lists every run, the damaged one with its problem, and records decisions as by the token\'s name', async () => {
    const list = await call('/api/runs');
    expect(list.status).toBe(200);
    expect(list.json.by).toBe('bo');
    const categories = Object.fromEntries(list.json.rows.map((row: { runId: string; category: string; location: string }) => [row.location.endsWith('wait-1') ? 'wait-1' : row.location.endsWith('wait-2') ? 'wait-2' : row.location, row.category]));
    expect(categories).toEqual({ 'wait-1': 'waiting', 'wait-2': 'waiting', [leaky]: 'done', [damaged]: 'unreadable' });
    expect(list.json.rows.find((row: { category: string }) => row.category === 'unreadable').problem).toContain('damaged at line');
    expect((await call('/api/runs?category=waiting')).json.rows).toHaveLength(2);
    expect((await call('/api/runs?q=wait-2')).json.rows).toHaveLength(1);
  });

  it('pages the list with limit and offset: the next page starts where the first ended, no row twice, the total and whether there are more', async () => {
    const all = (await call('/api/runs')).json;
    expect(all.rows.length).toBeGreaterThan(2);
    const first = (await call('/api/runs?limit=2')).json;
    expect(first).toMatchObject({ total: all.total, matching: all.matching, offset: 0, more: true });
    expect(first.rows.map((row: { key: string }) => row.key)).toEqual(all.rows.slice(0, 2).map((row: { key: string }) => row.key));
    const second = (await call('/api/runs?limit=2&offset=2')).json;
    expect(second).toMatchObject({ total: all.total, offset: 2 });
    expect(second.rows.map((row: { key: string }) => row.key)).toEqual(all.rows.slice(2, 4).map((row: { key: string }) => row.key));
    const last = (await call(`/api/runs?offset=${all.rows.length - 1}`)).json;
    expect(last.rows).toHaveLength(1);
    expect(last.more).toBe(false);
  });

  it('shows a damaged journal read-only as far as it reads, with the damage in words; a decision on it writes nothing', async () => {
    const key = encodeURIComponent((await call('/api/runs?category=unreadable')).json.rows[0].key);
    const detail = (await call(`/api/runs/${key}`)).json;
    expect(detail.readOnly).toBe('its journal is damaged');
    expect(detail.damage).toContain('checksum mismatch');
    expect(detail.steps.map((step: { seq: number }) => step.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(detail.transcript[0]).toEqual({ kind: 'text', role: 'user', text: 'Turn sales-notes.txt into a short report and write it to report.txt.' });
    expect(detail.transcript.some((entry: { kind: string; name?: string }) => entry.kind === 'tool-use' && entry.name === 'read_notes')).toBe(true);
    const before = treeOf(damaged);
    const refused = await call(`/api/runs/${key}/cancel`, { method: 'POST', body: {} });
    expect(refused.status).toBe(409);
    expect(treeOf(damaged)).toEqual(before);
  });

  it('refuses a body past 1 MiB with 413 before reading it, whether its length is said or it comes in chunks; the console stays up and a decision still goes through', async () => {
    const key = await keyOf('wait-1');
    const inbox = path.join(dir, '.durable-agent', 'runs', 'wait-1', 'decisions');
    const headers = { origin: server.origin, authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    // A decision as the page sends one, its reason 5 MB long: valid JSON, so only its size can refuse it.
    const huge = JSON.stringify({ toolUseId: 'toolu_03', verdict: 'denied', reason: 'x'.repeat(5 * 1024 * 1024) });
    const said = await fetch(`${server.origin}/api/runs/${key}/decisions`, { method: 'POST', headers, body: huge });
    expect(said.status).toBe(413);
    expect(((await said.json()) as { error: string }).error).toContain('1 MiB');
    // Sent in chunks with no length said: read up to the limit and no further.
    const bytes = new TextEncoder().encode(huge);
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 64 * 1024) controller.enqueue(bytes.subarray(at, at + 64 * 1024));
        controller.close();
      },
    });
    const chunked = await fetch(`${server.origin}/api/runs/${key}/decisions`, { method: 'POST', headers, body: chunks, duplex: 'half' } as RequestInit);
    expect(chunked.status).toBe(413);
    await chunked.body?.cancel();
    expect(fs.existsSync(inbox) ? fs.readdirSync(inbox) : []).toEqual([]);
    // Still up, and a body of the size a decision has is read as before.
    expect((await call('/api/runs')).status).toBe(200);
    const small = await call(`/api/runs/${key}/decisions`, { method: 'POST', body: { toolUseId: 'toolu_03', verdict: 'approved', input: { content: 7 } } });
    expect(small.status).toBe(409);
    expect(small.json.error).toContain('does not fit the input schema of write_report');
  });

  it('checks an edited input against the tool\'s schema on the server: a wrong one writes nothing, a right one is the decision', async () => {
    const key = await keyOf('wait-1');
    const wrong = await call(`/api/runs/${key}/decisions`, { method: 'POST', body: { toolUseId: 'toolu_03', verdict: 'approved', input: { content: 42 } } });
    expect(wrong.status).toBe(409);
    expect(wrong.json.error).toContain('does not fit the input schema of write_report');
    const inbox = path.join(dir, '.durable-agent', 'runs', 'wait-1', 'decisions');
    expect(fs.existsSync(inbox) ? fs.readdirSync(inbox) : []).toEqual([]);
    const right = await call(`/api/runs/${key}/decisions`, { method: 'POST', body: { toolUseId: 'toolu_03', verdict: 'approved', input: { content: 'Edited report.' } } });
    expect(right.status, right.body).toBe(200);
    expect(right.json.decision).toMatchObject({ tool_use_id: 'toolu_03', verdict: 'approved', by: 'bo', input: { content: 'Edited report.' } });
    const again = await call(`/api/runs/${key}/decisions`, { method: 'POST', body: { toolUseId: 'toolu_03', verdict: 'denied', reason: 'no' } });
    expect(again.status).toBe(409);
    const resumed = await runCliAsync(['demo', '--run', 'wait-1', '--resume'], { cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'report.txt'), 'utf8')).toBe('Edited report.');
  });

  it('cancels a run no process drives (the cancel record is cancelRun\'s, as the CLI\'s), and refuses to pause it', async () => {
    const key = await keyOf('wait-2');
    const pause = await call(`/api/runs/${key}/pause`, { method: 'POST', body: {} });
    expect(pause.status).toBe(409);
    expect(pause.json.error).toContain('Nothing to pause');
    const cancel = await call(`/api/runs/${key}/cancel`, { method: 'POST', body: { reason: 'wrong quarter' } });
    expect(cancel.status, cancel.body).toBe(200);
    expect(cancel.json).toMatchObject({ outcome: 'cancelled', state: 'cancelled', request: { by: 'bo', reason: 'wrong quarter' } });
    const status = await runCliAsync(['status', '--run', 'wait-2'], { cwd: dir });
    expect(status.stdout).toMatch(/cancelled\s+by bo/);
    // The list reads again what changed since it last read it.
    expect((await call('/api/runs?q=wait-2')).json.rows[0].category).toBe('cancelled');
  });

  it('pauses a paced run another process drives (it stops, exit 130), lists it as paused, and unpauses it', async () => {
    const paced = startCli(['demo', '--run', 'paced-2', '--pace', '1s'], { cwd: dir });
    for (const deadline = Date.now() + 30_000; !paced.output().includes('[turn 1]'); ) {
      if (Date.now() > deadline) throw new Error(`paced-2 did not start: ${paced.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const key = await keyOf('paced-2');
    const pause = await call(`/api/runs/${key}/pause`, { method: 'POST', body: {} });
    expect(pause.json).toMatchObject({ outcome: 'requested', request: { kind: 'pause', by: 'bo' } });
    expect((await paced.done).code).toBe(130);
    expect((await call('/api/runs?q=paced-2')).json.rows[0]).toMatchObject({ category: 'paused', pausedBy: 'bo' });
    expect((await call(`/api/runs/${key}/unpause`, { method: 'POST', body: {} })).json).toMatchObject({ outcome: 'unpaused', request: { by: 'bo' } });
    expect((await call('/api/runs?q=paced-2')).json.rows[0]).toMatchObject({ category: 'running', pausedBy: null });
    expect((await call(`/api/runs/${key}/unpause`, { method: 'POST', body: {} })).json.outcome).toBe('not-paused');
  });

  it('cancels a paced run that another process drives: that process ends it as cancelled and exits 9', async () => {
    const paced = startCli(['demo', '--run', 'paced-1', '--pace', '1s'], { cwd: dir });
    for (const deadline = Date.now() + 30_000; !paced.output().includes('[turn 1]'); ) {
      if (Date.now() > deadline) throw new Error(`paced-1 did not start: ${paced.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const key = await keyOf('paced-1');
    const cancel = await call(`/api/runs/${key}/cancel`, { method: 'POST', body: {} });
    expect(cancel.json.outcome).toBe('requested');
    expect((await paced.done).code).toBe(9);
    expect((await call(`/api/runs/${key}`)).json.summary.state).toBe('cancelled');
  });

  it('answers every GET without changing a file', async () => {
    const before = [dir, leaky, damaged].map(treeOf);
    const keys = (await call('/api/runs')).json.rows.map((row: { key: string }) => encodeURIComponent(row.key));
    for (const key of keys) {
      await call(`/api/runs/${key}`);
      // A GET to a route that changes things is no way to change them.
      expect((await call(`/api/runs/${key}/cancel`)).status).toBe(404);
    }
    await call('/');
    await call('/console.js');
    await call('/api/machine.svg');
    expect([dir, leaky, damaged].map(treeOf)).toEqual(before);
  });

  it('sends no secret the journal holds, in any body, the live stream included', async () => {
    expect(fs.readFileSync(path.join(leaky, '.durable-agent', 'journal.jsonl'), 'utf8')).toContain(SECRET);
    const key = encodeURIComponent((await call('/api/runs')).json.rows.find((row: { location: string }) => row.location === leaky).key);
    const detail = await call(`/api/runs/${key}`);
    expect(detail.body).toContain('ANTHROPIC_API_KEY=');
    expect(detail.json.ledger).toMatchObject([{ toolUseId: 'toolu_env', name: 'read_env', kind: 'ran', isError: false }]);
    const controller = new AbortController();
    const stream = await fetch(`${server.origin}/api/runs/${key}/events`, { headers: { authorization: `Bearer ${TOKEN}`, 'last-event-id': '-1' }, signal: controller.signal });
    const reader = stream.body!.getReader();
    let text = '';
    while (!text.includes('id: 3\n')) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    bodies.push(text);
    expect(text).toMatch(/^event: record\ndata: \{"seq":0,/);
    expect(bodies.length).toBeGreaterThan(20);
    expect(bodies.filter((body) => body.includes(SECRET) || body.includes(TOKEN))).toEqual([]);
  });

  it('refuses to listen beyond loopback without a token of the user\'s choosing', async () => {
    await expect(startConsole({ roots: [path.join(dir, '.durable-agent')], host: '0.0.0.0', port: 0, user: 'nobody' })).rejects.toThrow(ConsoleTokenRequiredError);
    const open = await startConsole({ roots: [path.join(dir, '.durable-agent')], host: '0.0.0.0', port: 0, token: TOKEN, user: 'nobody' });
    try {
      const response = await fetch(`http://127.0.0.1:${open.port}/api/runs`, { headers: { authorization: `Bearer ${TOKEN}` } });
      // Listening on every address, it answers to whatever name the machine is reached by; the token guards it.
      expect(response.status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${open.port}/api/runs`)).status).toBe(403);
      expect(open.url).toBe(`http://0.0.0.0:${open.port}/#token=${encodeURIComponent(TOKEN)}`);
    } finally {
      await open.close();
    }
  });
});
