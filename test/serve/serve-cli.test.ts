/**
 * `durable-agent serve --dir DIR --agents FILE` as a user starts it, the agent's model a real
 * model name, the real SDK talking to a fake Messages API on 127.0.0.1: a client starts a run,
 * follows its events (the model's text as it streams, then the recorded reply), and serve is
 * SIGKILLed mid-run; started again, serve takes the run up, and the client, reconnecting with its
 * last event id, gets every later record once and the end. The token is refused on the command line.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { openRunsFolder } from '../../src/store/open-store.ts';
import { runCliAsync, startCli } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic, type FakeAnswer } from '../helpers/fake-anthropic.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { ApiClient, type ReceivedEvent, recordSeqs } from './api-client.ts';
import { writeAgentsModule } from './serve-agents.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const TOKEN = 'ana:serve-cli-token-0123456789';
const USAGE = { input: 60, output: 20, cacheRead: 0, cacheWrite: 0 };

const MODULE = writeAgentsModule('serve-agents');
afterAll(() => fs.rmSync(MODULE, { force: true }));

function startServe(dir: string, baseUrl: string) {
  const child = startCli(['serve', '--dir', dir, '--agents', MODULE, '--port', '0'], { cwd: dir, env: { DURABLE_AGENT_API_TOKEN: TOKEN, ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: baseUrl } });
  const url = vi.waitFor(
    () => {
      // Both lines of its start: where it listens, then what it serves and took up.
      const found = /\[serve\] (http:\/\/127\.0\.0\.1:\d+) /.exec(child.output());
      if (!found || !child.output().includes('Ctrl-C stops it.')) throw new Error(`serve has not said where it listens yet: ${child.output()}`);
      return found[1]!;
    },
    { timeout: 30_000, interval: 50 },
  );
  return { ...child, url };
}

describe('durable-agent serve --dir --agents', () => {
  it('refuses a token on the command line, a missing token, a folder and a fleet at once, --agents for a fleet (exit 2, nothing served)', async () => {
    const cwd = tempDir();
    const flag = await runCliAsync(['serve', '--dir', cwd, '--token', 'ana:secret-on-the-command-line'], { cwd });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('DURABLE_AGENT_API_TOKEN');
    expect(flag.stderr).not.toContain('secret-on-the-command-line');
    const none = await runCliAsync(['serve', '--dir', cwd, '--port', '0'], { cwd });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('DURABLE_AGENT_API_TOKEN=NAME:SECRET');
    const both = await runCliAsync(['serve', '--dir', cwd, '--database-url', 'postgresql://nobody@127.0.0.1:1/none'], { cwd, env: { DURABLE_AGENT_API_TOKEN: TOKEN } });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('not both');
    const agentsForFleet = await runCliAsync(['serve', '--database-url', 'postgresql://nobody@127.0.0.1:1/none', '--agents', MODULE], { cwd, env: { DURABLE_AGENT_API_TOKEN: TOKEN } });
    expect(agentsForFleet.code).toBe(2);
    expect(agentsForFleet.stderr).toContain('--agents is for --dir');
  });

  it('streams the model text live, and after a SIGKILL of serve mid-run the next serve takes the run up: the client reconnects and gets every later record once, to the end', async () => {
    const dir = tempDir();
    let connected!: () => void;
    const following = new Promise<void>((resolve) => (connected = resolve));
    // The first reply is held until the client follows, and streams its text in small pieces; the second never answers.
    const firstReply = (): FakeAnswer => ({
      stream: { ...toolUseReply([{ id: 'toolu_01', name: 'send_invoice', input: { customer: 'ACME' } }], 'I will send the invoice to ACME now.'), usage: USAGE },
      chunk: 5,
      holdAt: { event: 0, until: following },
    });
    const api = new FakeAnthropic((request) => (assistantTurns(request) === 0 ? firstReply() : { hang: true }));
    const base = await api.start();
    try {
      const first = startServe(dir, base);
      const client = new ApiClient(await first.url, TOKEN);
      const started = await client.post('/v1/runs', { agent: 'billing', task: 'Invoice ACME.', runId: 'inv-acme' });
      expect(started.status, started.text).toBe(201);
      let lastId: string | null = null;
      const before = await client.follow('inv-acme', {
        onEvent: (event) => {
          connected();
          if (event.id !== null) lastId = event.id;
        },
        // Killed once the invoice is out and the second model call hangs.
        stop: (event) => {
          if (event.event.type === 'tool-result') setTimeout(() => first.child.kill('SIGKILL'), 0);
          return false;
        },
      });
      expect(before.broken || before.ended === false).toBe(true);
      await first.done;
      const types = before.events.map((event) => event.event.type);
      expect(types).toContain('text-delta');
      const deltas = before.events.filter((event) => event.event.type === 'text-delta');
      expect(deltas.every((event) => event.id === null)).toBe(true);
      expect(deltas.map((event) => (event.event.type === 'text-delta' ? event.event.text : '')).join('')).toBe('I will send the invoice to ACME now.');
      const reply = before.events.find((event) => event.event.type === 'reply')!;
      expect(reply.event).toMatchObject({ text: 'I will send the invoice to ACME now.', supersedesDeltas: true });
      expect(types).toContain('tool-call');
      expect(types).toContain('tool-result');
      expect(lastId).not.toBeNull();

      api.respondWith((request) => (assistantTurns(request) === 1 ? { reply: { ...endTurnReply('Invoice sent to ACME.'), usage: USAGE } } : { hang: true }));
      const second = startServe(dir, base);
      try {
        await vi.waitFor(() => expect(second.output()).toContain('took up inv-acme'), { timeout: 30_000, interval: 50 });
        const again = new ApiClient(await second.url, TOKEN);
        const after = await again.follow('inv-acme', { lastEventId: lastId });
        expect(after.ended).toBe(true);
        const recorded = (events: ReceivedEvent[]) => events.filter((event) => event.id !== null);
        const all = [...recorded(before.events), ...recorded(after.events)];
        const journal = await openRunsFolder(path.join(dir, '.durable-agent')).store('inv-acme').load();
        // No gap, no duplicate: the records of the journal, each once, across the kill.
        expect(recordSeqs(all)).toEqual(journal.records.map((stored) => stored.record.seq));
        expect(after.events[after.events.length - 1]!.event).toMatchObject({ type: 'end', state: 'done', result: 'Invoice sent to ACME.' });
        expect(fs.readFileSync(path.join(dir, 'outbox.txt'), 'utf8').trim().split('\n')).toHaveLength(1);
        const run = await again.get('/v1/runs/inv-acme');
        expect(run.body.run).toMatchObject({ state: 'done', result: 'Invoice sent to ACME.', agent: { name: 'billing' } });
        expect(JSON.stringify([before, after, run.body])).not.toContain(KEY);
      } finally {
        second.child.kill('SIGTERM');
        expect((await second.done).code).toBe(0);
      }
    } finally {
      await api.stop();
    }
  }, 120_000);

  it('a run waiting for approval when serve stops (SIGTERM) is not taken up by the next serve until a decision comes through the API; then it ends, one invoice', async () => {
    const dir = tempDir();
    const api = new FakeAnthropic((request) =>
      assistantTurns(request) === 0
        ? { reply: { ...toolUseReply([{ id: 'toolu_01', name: 'send_invoice', input: { customer: 'ACME' } }]), usage: USAGE } }
        : { reply: { ...endTurnReply('Invoice sent to ACME.'), usage: USAGE } },
    );
    const base = await api.start();
    try {
      const first = startServe(dir, base);
      const client = new ApiClient(await first.url, TOKEN);
      expect((await client.post('/v1/runs', { agent: 'careful', task: 'Invoice ACME.', runId: 'inv-wait' })).status).toBe(201);
      const waiting = await client.follow('inv-wait', { stop: (event) => event.event.type === 'waiting' });
      const lastId = waiting.events[waiting.events.length - 1]!.id;
      first.child.kill('SIGTERM');
      expect((await first.done).code).toBe(0);

      const second = startServe(dir, base);
      try {
        const again = new ApiClient(await second.url, TOKEN);
        expect(second.output()).not.toContain('took up');
        expect((await again.get('/v1/runs/inv-wait')).body.run).toMatchObject({ category: 'waiting', waitingOn: { toolUseId: 'toolu_01', needs: 'approval' } });
        expect(fs.existsSync(path.join(dir, 'outbox.txt'))).toBe(false);
        expect((await again.post('/v1/runs/inv-wait/decisions', { toolUseId: 'toolu_01', verdict: 'approve', reason: 'checked' })).status).toBe(202);
        const rest = await again.follow('inv-wait', { lastEventId: lastId });
        expect(rest.ended).toBe(true);
        expect(rest.events[rest.events.length - 1]!.event).toMatchObject({ type: 'end', state: 'done', result: 'Invoice sent to ACME.' });
        await vi.waitFor(() => expect(second.output()).toContain('took up run inv-wait'), { timeout: 30_000, interval: 50 });
        const journal = await openRunsFolder(path.join(dir, '.durable-agent')).store('inv-wait').load();
        expect(recordSeqs([...waiting.events, ...rest.events])).toEqual(journal.records.map((stored) => stored.record.seq));
        expect(fs.readFileSync(path.join(dir, 'outbox.txt'), 'utf8').trim().split('\n')).toHaveLength(1);
      } finally {
        second.child.kill('SIGTERM');
        await second.done;
      }
    } finally {
      await api.stop();
    }
  }, 120_000);
});
