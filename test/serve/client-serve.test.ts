/**
 * The real client (`durable-agent/client`) against the real server (createServer over a folder,
 * agents with a scripted model): a start twice under one Idempotency-Key is one run; followRun
 * yields the journal's records in order and ends at `end`; a run that waits for approval goes on
 * after client.decide, in the same loop; and a follow whose connection is cut again and again
 * mid-stream (a TCP proxy between them), or whose server is closed and started again on the same
 * folder mid-stream, yields every recorded event once: the journal's records, no gap, no duplicate.
 * Then the real `durable-agent serve` (a child process, the SDK talking to a fake Messages API)
 * SIGKILLed mid-run and started again: the follower reconnects by itself to the serve that took
 * the run up, every record once, the invoice sent once.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Caller, TokenCheck } from '../../src/access/caller.ts';
import { defineAgent } from '../../src/agent/agent-definition.ts';
import type { RunEvent } from '../../src/client/api-types.ts';
import { createClient, type DurableAgentClient } from '../../src/client/index.ts';
import type { Model } from '../../src/model/model.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { createServer, type RunningServer } from '../../src/serve/create-server.ts';
import { openRunsFolder } from '../../src/store/open-store.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { startCli } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { freePort } from '../helpers/free-port.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { writeAgentsModule } from './serve-agents.ts';

const TOKEN = 'ana:client-serve-token-0001';
const KEY = 'test-only-key-never-store-me-client-serve';
const USAGE = { input: 60, output: 20, cacheRead: 0, cacheWrite: 0 };
const tokens: TokenCheck = {
  callerOf: (header): Caller | null => (header === `Bearer ${TOKEN}` ? { name: 'ana', role: 'steer', tenant: null } : null),
};

const sent: string[] = [];
const sendInvoice = defineTool({
  name: 'send_invoice',
  description: 'Send an invoice.',
  inputSchema: { type: 'object', properties: { customer: { type: 'string' } }, required: ['customer'] },
  readOnly: false,
  run: ({ customer }: { customer: string }) => {
    sent.push(customer);
    return `invoice sent to ${customer}`;
  },
});
const lookUp = defineTool({
  name: 'look_up',
  description: 'Look a customer up.',
  inputSchema: { type: 'object', properties: { customer: { type: 'string' } }, required: ['customer'] },
  readOnly: true,
  run: ({ customer }: { customer: string }) => `${customer}: net 30, EUR`,
});

/** Several turns of calls, so that a stream has many records to cut between and within. */
const lookups = [0, 1, 2, 3].map((i) => toolUseReply([{ id: `toolu_l${i}`, name: 'look_up', input: { customer: `C${i}` } }, { id: `toolu_m${i}`, name: 'look_up', input: { customer: `D${i}` } }], `Looking up C${i} and D${i}.`));
const careful = defineAgent({
  name: 'careful',
  model: scriptedModel([...lookups, toolUseReply([{ id: 'toolu_1', name: 'send_invoice', input: { customer: 'ACME' } }], 'Sending it.'), endTurnReply('Invoiced ACME.')], { name: 'scripted-careful' }),
  tools: [lookUp, sendInvoice],
  requireApproval: ['send_invoice'],
});
const reader = defineAgent({ name: 'reader', model: scriptedModel([...lookups, endTurnReply('Looked them all up.')], { name: 'scripted-reader' }), tools: [lookUp] });

/** A model whose second reply waits until the test lets it go: the run is mid-way while it waits. */
let releaseSlow: () => void = () => {};
let slowAsked: () => void = () => {};
let slowHeld = false;
const slowAskedOnce = new Promise<void>((resolve) => (slowAsked = resolve));
const slowModel: Model = {
  name: 'scripted-slow',
  createMessage: async (request) => {
    const turns = request.messages.filter((message) => message.role === 'assistant').length;
    if (turns === 0) return toolUseReply([{ id: 'toolu_s0', name: 'look_up', input: { customer: 'ACME' } }], 'First a look.');
    if (turns === 1) {
      if (!slowHeld) {
        slowHeld = true;
        slowAsked();
        await new Promise<void>((resolve) => (releaseSlow = resolve));
      }
      return toolUseReply([{ id: 'toolu_s1', name: 'look_up', input: { customer: 'Globex' } }], 'Then another.');
    }
    return endTurnReply('Slow and steady.');
  },
};
const slow = defineAgent({ name: 'slow', model: slowModel, tools: [lookUp] });
const AGENTS = [careful, reader, slow];

/**
 * A TCP proxy in front of the server: the client's base URL stays while the server behind it is
 * replaced, and `cutEventStreamsAfter` cuts each event stream's socket after so many bytes of the
 * answer, the first `times` streams.
 */
class CuttingProxy {
  private readonly server = net.createServer((socket) => this.pipe(socket));
  private readonly sockets = new Set<net.Socket>();
  target = 0;
  cutAfter: number | null = null;
  cutsLeft = 0;
  cuts = 0;
  /** Event streams opened through the proxy. */
  streams = 0;

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  cutEventStreamsAfter(bytes: number, times: number): void {
    this.cutAfter = bytes;
    this.cutsLeft = times;
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private pipe(socket: net.Socket): void {
    const upstream = net.connect(this.target, '127.0.0.1');
    this.sockets.add(socket).add(upstream);
    let isEvents = false;
    let received = 0;
    socket.on('data', (chunk: Buffer) => {
      // A kept-alive connection carries one request after another: each request line says what the answer is.
      const requestLine = /^([A-Z]+) (\S+) HTTP\//.exec(chunk.toString('latin1'));
      if (requestLine) {
        isEvents = requestLine[1] === 'GET' && /\/events(\?|$)/.test(requestLine[2]!);
        received = 0;
        if (isEvents) this.streams += 1;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (isEvents && this.cutAfter !== null && this.cutsLeft > 0 && received + chunk.length > this.cutAfter) {
        // Forward only up to the cut, then drop both sides: the client sees a stream broken off mid-message.
        socket.write(chunk.subarray(0, this.cutAfter - received));
        this.cutsLeft -= 1;
        this.cuts += 1;
        socket.destroy();
        upstream.destroy();
        return;
      }
      received += chunk.length;
      socket.write(chunk);
    });
    const end = () => {
      socket.destroy();
      upstream.destroy();
      this.sockets.delete(socket);
      this.sockets.delete(upstream);
    };
    socket.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  }
}

let dir: string;
let server: RunningServer;
let proxy: CuttingProxy;
let client: DurableAgentClient;

async function startServer(port = 0): Promise<void> {
  server = await createServer({ dir, agents: AGENTS, port, tokens, heartbeatMs: 500, env: {} });
  proxy.target = server.port;
}

async function journalSeqs(runId: string): Promise<number[]> {
  const loaded = await openRunsFolder(path.join(dir, '.durable-agent')).store(runId).load();
  return loaded.records.map((stored) => stored.record.seq);
}

/** The seq of each record the events came from, each once, in the order they came. */
function seqsOf(events: readonly RunEvent[]): number[] {
  const seqs: number[] = [];
  for (const event of events) if ('seq' in event && event.seq !== seqs[seqs.length - 1]) seqs.push(event.seq);
  return seqs;
}

async function followAll(runId: string, options: Parameters<DurableAgentClient['followRun']>[1] = {}): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for await (const event of client.followRun(runId, { reconnect: { initialDelayMs: 20, maxDelayMs: 200 }, ...options })) events.push(event);
  return events;
}

beforeAll(async () => {
  dir = tempDir();
  proxy = new CuttingProxy();
  const base = await proxy.start();
  await startServer();
  client = createClient({ baseUrl: base, token: TOKEN, retry: { initialDelayMs: 20, maxDelayMs: 200 } });
});
afterAll(async () => {
  releaseSlow();
  await server?.close();
  await proxy?.close();
});

describe('the client against serve over a folder', () => {
  it('starts one run for two starts under one idempotency key, at once or one after the other', async () => {
    const [first, second] = await Promise.all([0, 1].map(() => client.startRun({ agent: 'reader', task: 'Look them up.' }, { idempotencyKey: 'order-4711' })));
    expect(first!.run.runId).toBe(second!.run.runId);
    expect([first!.created, second!.created].sort()).toEqual([false, true]);
    const third = await client.startRun({ agent: 'reader', task: 'Look them up.' }, { idempotencyKey: 'order-4711' });
    expect(third).toMatchObject({ created: false, run: { runId: first!.run.runId } });
    const other = await client.startRun({ agent: 'reader', task: 'Look them up.' }, { idempotencyKey: 'order-4712' });
    expect(other.created).toBe(true);
    expect(other.run.runId).not.toBe(first!.run.runId);
    const ids = openRunsFolder(path.join(dir, '.durable-agent')).entries().filter((entry) => !entry.archived).map((entry) => entry.folderId);
    expect(ids.filter((id) => id === first!.run.runId)).toHaveLength(1);
  });

  it('follows a run: the journal’s records in order, each event once, ending at end', async () => {
    const { run } = await client.startRun({ agent: 'reader', task: 'Look them all up.', runId: 'read-1' });
    const events = await followAll(run.runId);
    expect(events[events.length - 1]).toMatchObject({ type: 'end', state: 'done', category: 'done', result: 'Looked them all up.' });
    expect(events.filter((event) => event.type === 'end')).toHaveLength(1);
    expect(seqsOf(events)).toEqual(await journalSeqs('read-1'));
    expect(events.filter((event) => event.type === 'tool-result')).toHaveLength(8);
    expect(new Set(events.map((event) => JSON.stringify(event))).size).toBe(events.length);
    expect((await client.getRun('read-1')).result).toBe('Looked them all up.');
  });

  it('a run that waits for approval goes on after client.decide, in the same loop, to its end', async () => {
    const { run } = await client.startRun({ agent: 'careful', task: 'Invoice ACME.', runId: 'inv-1' });
    const events: RunEvent[] = [];
    for await (const event of client.followRun(run.runId)) {
      events.push(event);
      if (event.type === 'waiting' && event.waitingOn.kind === 'call') {
        expect(event.waitingOn).toMatchObject({ toolUseId: 'toolu_1', name: 'send_invoice', needs: 'approval' });
        expect(sent).toEqual([]);
        expect(await client.decide(run.runId, { toolUseId: event.waitingOn.toolUseId, verdict: 'approve' })).toEqual({ accepted: true, runId: 'inv-1' });
      }
    }
    expect(events[events.length - 1]).toMatchObject({ type: 'end', category: 'done', result: 'Invoiced ACME.' });
    expect(events.find((event) => event.type === 'tool-result' && event.toolUseId === 'toolu_1')).toMatchObject({ isError: false, content: expect.stringContaining('invoice sent to ACME') });
    expect(sent).toEqual(['ACME']);
    expect(seqsOf(events)).toEqual(await journalSeqs('inv-1'));
  });

  it('reconnects after each cut of its connection mid-stream, and yields every later event once: no gap, no duplicate', async () => {
    const whole = await followAll('read-1');
    // Cut 6 streams, each 700 bytes into its answer (headers and all): mid-message, mid-record.
    proxy.cutEventStreamsAfter(700, 6);
    const cut = await followAll('read-1');
    expect(proxy.cuts).toBe(6);
    expect(cut).toEqual(whole);
    expect(seqsOf(cut)).toEqual(await journalSeqs('read-1'));
  });

  it('a server closed and started again on the same folder mid-stream: the follower reconnects by itself and yields every later record once', async () => {
    const { run } = await client.startRun({ agent: 'slow', task: 'Take your time.', runId: 'slow-1' });
    const events: RunEvent[] = [];
    const streamsBefore = proxy.streams;
    const following = (async () => {
      for await (const event of client.followRun(run.runId, { reconnect: { initialDelayMs: 20, maxDelayMs: 200, maxAttempts: 50 } })) events.push(event);
    })();
    await slowAskedOnce;
    await expectEventually(() => events.some((event) => event.type === 'tool-result'));
    // The close cuts every connection at once; the held reply is let go meanwhile, and the run
    // goes on until the close stops it at a step (which one is up to the timing; often none is
    // left by then: a kill mid-run and a take-up by the next server are the chat example's test
    // and serve-cli's). Either way the follower's later records come through the next server.
    const closing = server.close();
    releaseSlow();
    await closing;
    await startServer(server.port);
    await following;
    expect(proxy.streams - streamsBefore).toBeGreaterThan(1);
    expect(events[events.length - 1]).toMatchObject({ type: 'end', category: 'done', result: 'Slow and steady.' });
    expect(seqsOf(events)).toEqual(await journalSeqs('slow-1'));
    expect(new Set(events.map((event) => JSON.stringify(event))).size).toBe(events.length);
  });
});

describe('the client against `durable-agent serve` killed mid-run', () => {
  it('a serve SIGKILLed while the model call is in flight, started again on the same folder and port: the follower reconnects by itself, the run is taken up, every record once, one invoice', async () => {
    const folder = tempDir();
    const module = writeAgentsModule('client-serve-agents');
    const port = await freePort();
    const api = new FakeAnthropic((request) =>
      // The call after the invoice hangs: serve is killed while it is in flight.
      assistantTurns(request) === 0 ? { stream: { ...toolUseReply([{ id: 'toolu_01', name: 'send_invoice', input: { customer: 'ACME' } }], 'Sending the invoice.'), usage: USAGE }, chunk: 5 } : { hang: true },
    );
    const apiUrl = await api.start();
    const startServe = () => {
      const serve = startCli(['serve', '--dir', folder, '--agents', module, '--port', String(port)], { cwd: folder, env: { DURABLE_AGENT_API_TOKEN: TOKEN, ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: apiUrl } });
      const ready = vi.waitFor(
        () => {
          if (!serve.output().includes('Ctrl-C stops it.')) throw new Error(`serve has not started yet: ${serve.output()}`);
        },
        { timeout: 30_000, interval: 50 },
      );
      return { ...serve, ready };
    };
    try {
      const first = startServe();
      await first.ready;
      const remote = createClient({ baseUrl: `http://127.0.0.1:${port}`, token: TOKEN });
      const { run } = await remote.startRun({ agent: 'billing', task: 'Invoice ACME.' }, { idempotencyKey: 'invoice-acme-1' });
      const events: RunEvent[] = [];
      const following = (async () => {
        for await (const event of remote.followRun(run.runId, { reconnect: { initialDelayMs: 50, maxDelayMs: 500, maxAttempts: 100 } })) events.push(event);
      })();
      await vi.waitFor(() => expect(api.requests.filter((request) => assistantTurns(request) === 1)).toHaveLength(1), { timeout: 30_000, interval: 50 });
      await vi.waitFor(() => expect(events.some((event) => event.type === 'tool-result')).toBe(true), { timeout: 30_000, interval: 50 });
      first.child.kill('SIGKILL');
      expect((await first.done).signal).toBe('SIGKILL');
      const seenBefore = events.length;

      api.respondWith((request) => (assistantTurns(request) === 1 ? { stream: { ...endTurnReply('Invoice sent to ACME.'), usage: USAGE }, chunk: 5 } : { hang: true }));
      const second = startServe();
      try {
        await following;
        expect(second.output()).toContain(`took up ${run.runId}`);
        expect(events.length).toBeGreaterThan(seenBefore);
        expect(events[events.length - 1]).toMatchObject({ type: 'end', state: 'done', result: 'Invoice sent to ACME.' });
        const recorded = events.filter((event) => event.type !== 'text-delta');
        expect(new Set(recorded.map((event) => JSON.stringify(event))).size).toBe(recorded.length);
        const journal = await openRunsFolder(path.join(folder, '.durable-agent')).store(run.runId).load();
        expect(seqsOf(events)).toEqual(journal.records.map((stored) => stored.record.seq));
        expect(fs.readFileSync(path.join(folder, 'outbox.txt'), 'utf8').trim().split('\n')).toHaveLength(1);
      } finally {
        second.child.kill('SIGTERM');
        await second.done;
      }
    } finally {
      await api.stop();
      fs.rmSync(module, { force: true });
    }
  }, 120_000);
});

async function expectEventually(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}
