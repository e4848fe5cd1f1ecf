/**
 * Durable waits with real CLI processes (`run --tools wait` against the fake Anthropic server:
 * the real SDK over HTTP; a run without a terminal waits only with --wait, as for a person): a wait of 30 s survives a SIGKILL at 10 s and the run goes on at 30 s;
 * `durable-agent signal` delivers an event a stopped run takes when resumed, sent twice it is
 * taken once; and kills around the wait (after its DECISION_NEEDED record, with the signal in the
 * inbox and not yet in the journal; after its DECISION record) leave it taken once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import type { JournalRecord } from '../../src/store/journal/journal-record.ts';
import { type CliRun, runCliAsync, startCli } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic, type ReceivedRequest } from '../helpers/fake-anthropic.ts';
import { toolResultOf } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const MODEL = 'claude-test-model';
const USAGE = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 };

interface Served {
  url: string;
  requests: ReceivedRequest[];
  /** When each request arrived (epoch ms). */
  arrivals: number[];
}

async function withModel<T>(input: Record<string, unknown>, body: (served: Served) => Promise<T>): Promise<T> {
  const script = [toolUseReply([{ id: 'toolu_w', name: 'wait', input }]), endTurnReply('Went on after the wait.')];
  const arrivals: number[] = [];
  const server = new FakeAnthropic((request) => {
    arrivals.push(Date.now());
    return { reply: { ...script[assistantTurns(request)]!, usage: USAGE } };
  });
  const url = await server.start();
  try {
    return await body({ url, requests: server.requests, arrivals });
  } finally {
    await server.stop();
  }
}

const envOf = (url: string, extra: Record<string, string> = {}) => ({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url, ...extra });
const cli = (args: string[], dir: string, url = 'http://127.0.0.1:9', extra: Record<string, string> = {}) => runCliAsync(args, { cwd: dir, env: envOf(url, extra) });
const start = ['run', '--model', MODEL, '--task', 'Wait, then go on', '--tools', 'wait'];
const resume = ['run', '--resume'];

function expectCode(run: CliRun, code: number): void {
  expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(code);
}

function storeOf(dir: string): FileStore {
  return new FileStore(path.join(dir, '.durable-agent'));
}

async function recordsOf(dir: string): Promise<JournalRecord[]> {
  return (await storeOf(dir).load()).records.map((stored) => stored.record);
}

async function waitingSince(dir: string): Promise<number | null> {
  const store = storeOf(dir);
  if (!(await store.exists())) return null;
  return foldJournal(store.location, await store.load()).context.awaiting?.since ?? null;
}

async function decisionsOf(dir: string) {
  return (await recordsOf(dir)).filter((record) => record.event === 'DECISION').flatMap((record) => record.decisions?.add ?? []);
}

describe('a wait survives kill -9', () => {
  it('a wait of 30 s killed at 10 s and resumed goes on at 30 s (± 1 s), at the deadline in its journal', async () => {
    const dir = tempDir();
    await withModel({ seconds: 30 }, async ({ url, requests, arrivals }) => {
      const first = startCli([...start, '--wait'], { cwd: dir, env: envOf(url) });
      const since = await vi.waitFor(
        async () => {
          const at = await waitingSince(dir);
          expect(at, first.output()).not.toBeNull();
          return at!;
        },
        { timeout: 20_000, interval: 50 },
      );
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, since + 10_000 - Date.now())));
      first.child.kill('SIGKILL');
      const killed = await first.done;
      expect(killed.signal).toBe('SIGKILL');
      expect(killed.stdout).toContain('[wait] toolu_w wait: waits for the time ');
      expect(requests).toHaveLength(1);

      const resumed = await cli([...resume, '--wait'], dir, url);
      expectCode(resumed, 0);
      expect(resumed.stdout).toContain('[done] Went on after the wait.');
      // The run asked the model again 30 s after the wait began (the DECISION_NEEDED record), not 30 s after the resume.
      const wentOnAfter = arrivals[1]! - since;
      expect(wentOnAfter).toBeGreaterThanOrEqual(30_000);
      expect(wentOnAfter).toBeLessThanOrEqual(31_000);
      expect(await decisionsOf(dir)).toEqual([expect.objectContaining({ tool_use_id: 'toolu_w', by: 'clock', at: since + 30_000 })]);
      expect(String(toolResultOf(requests[1]!.body.messages, 'toolu_w')?.content)).toBe(`The wait is over (30 s): it is ${new Date(since + 30_000).toISOString()}.`);
    });
  }, 60_000);

  it('a resume after the deadline goes on at once', async () => {
    const dir = tempDir();
    await withModel({ seconds: 1 }, async ({ url, requests }) => {
      expectCode(await cli([...start, '--no-wait'], dir, url), 7);
      const since = (await waitingSince(dir))!;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, since + 1_500 - Date.now())));
      // Without --wait a run never waits for its time: a resume that did not find the deadline past would stop (exit 7).
      const resumed = await cli(resume, dir, url);
      expectCode(resumed, 0);
      expect(resumed.stdout).not.toContain('[waiting]');
      expect(resumed.stdout).toContain('[decided] toolu_w wait answered by clock: The wait is over (1 s)');
      // Answered by the clock at the deadline its journal holds, not at the resume.
      expect(await decisionsOf(dir)).toEqual([expect.objectContaining({ tool_use_id: 'toolu_w', by: 'clock', at: since + 1_000 })]);
      expect(requests).toHaveLength(2);
    });
  }, 60_000);
});

describe('durable-agent signal', () => {
  it('delivers an event to a stopped run (kept, sent twice taken once), shown by pending and status; the resume takes it with its data', async () => {
    const dir = tempDir();
    await withModel({ event: 'deploy-done', timeoutSeconds: 3600 }, async ({ url, requests }) => {
      const stopped = await cli([...start, '--no-wait'], dir, url);
      expectCode(stopped, 7);
      expect(stopped.stdout).toContain('[wait] toolu_w wait: waits for event deploy-done (until ');
      expect(stopped.stdout).toMatch(/\n {2}signal: {2}(npx --no-install )?durable-agent signal deploy-done \[--data JSON\]\n/);
      expect(stopped.stdout).toContain('[waiting] toolu_w waits for its time or its event; resume with --resume');

      const pending = await cli(['pending'], dir);
      expectCode(pending, 0);
      expect(pending.stdout).toMatch(/toolu_w +wait +event deploy-done \(until \S+ at the latest\)/);
      expect((await cli(['status'], dir)).stdout).toContain('toolu_w wait: event deploy-done (until ');

      const sent = await cli(['signal', 'deploy-done', '--data', '{"version":"1.4.2"}', '--by', 'ci'], dir);
      expectCode(sent, 0);
      expect(sent.stdout).toContain('[signal] deploy-done delivered to the run in ');
      expect(sent.stdout).toContain(': toolu_w waits for it and takes it');
      const again = await cli(['signal', 'deploy-done', '--data', '{"version":"1.4.3"}', '--by', 'ci'], dir);
      expectCode(again, 0);
      expect(again.stdout).toContain('already and waits to be taken: not delivered again');
      expectCode(await cli(['approve', 'toolu_w'], dir), 2);

      const resumed = await cli(resume, dir, url);
      expectCode(resumed, 0);
      expect(resumed.stdout).toContain('[decided] toolu_w wait answered by ci: The event deploy-done arrived');
      const result = String(toolResultOf(requests[1]!.body.messages, 'toolu_w')?.content);
      expect(result).toContain('Its data: {"version":"1.4.2"}');
      expect(await decisionsOf(dir)).toHaveLength(1);
      expect((await cli(['history'], dir)).stdout).toContain('toolu_w waits for its time or its event');
      // The run has ended: a signal now would never be taken.
      const late = await cli(['signal', 'deploy-done'], dir);
      expectCode(late, 2);
      expect(late.stderr).toContain('has ended (done): no wait of it will take the signal. Nothing was sent.');
    });
  }, 60_000);

  it('a signal for an event no call waits for is kept, and not taken by a wait for another', async () => {
    const dir = tempDir();
    await withModel({ event: 'go' }, async ({ url }) => {
      // Before the run exists: refused (nothing would ever take it).
      const none = await cli(['signal', 'go'], dir);
      expectCode(none, 2);
      expect(none.stderr).toContain('No run is stored at');
      expectCode(await cli([...start, '--no-wait'], dir, url), 7);
      // The run waits for go; an event of another name is kept (for a wait of that name), not taken by this wait.
      const other = await cli(['signal', 'later', '--id', 'l-1'], dir);
      expect(other.stdout).toContain('no call waits for it yet; it is kept until a wait for later takes it');
      expectCode(await cli(['signal', 'go', '--id', 'g-1'], dir), 0);
      expectCode(await cli(resume, dir, url), 0);
      expect(fs.readdirSync(path.join(dir, '.durable-agent', 'signals')).sort()).toEqual(['go~g-1@toolu_w.taken', 'later~l-1.json']);
      // The run has ended: what it kept is refused from now on.
      const retry = await cli(['signal', 'later', '--id', 'l-1'], dir);
      expectCode(retry, 2);
      expect(retry.stderr).toContain('has ended (done)');
    });
  }, 60_000);
});

describe('kills around a wait', () => {
  it('killed after its DECISION_NEEDED record, the signal sent while no process runs is taken once on resume', async () => {
    const dir = tempDir();
    await withModel({ event: 'go' }, async ({ url }) => {
      const killed = await cli(start, dir, url, { CRASH_AFTER: 'after-save-waiting:1' });
      expect(killed.code, killed.stderr).toBe(137);
      expect((await recordsOf(dir)).at(-1)!.event).toBe('DECISION_NEEDED');
      expectCode(await cli(['signal', 'go', '--data', '1'], dir), 0);
      expect(await decisionsOf(dir)).toEqual([]);
      expectCode(await cli(resume, dir, url), 0);
      expect(await decisionsOf(dir)).toEqual([expect.objectContaining({ tool_use_id: 'toolu_w', signal: expect.objectContaining({ name: 'go' }) })]);
    });
  }, 60_000);

  it('killed after its DECISION record, the resume records it once more nowhere and takes no other signal', async () => {
    const dir = tempDir();
    await withModel({ event: 'go' }, async ({ url, requests }) => {
      expectCode(await cli([...start, '--no-wait'], dir, url), 7);
      expectCode(await cli(['signal', 'go', '--data', '"first"'], dir), 0);
      const killed = await cli(resume, dir, url, { CRASH_AFTER: 'after-save-decision:1' });
      expect(killed.code, killed.stderr).toBe(137);
      // A second go, sent after the first was taken: for a later wait, not this one.
      expectCode(await cli(['signal', 'go', '--data', '"second"'], dir), 0);
      expectCode(await cli(resume, dir, url), 0);
      const decisions = await decisionsOf(dir);
      expect(decisions).toHaveLength(1);
      expect(decisions[0]!.text).toContain('Its data: "first"');
      expect(String(toolResultOf(requests.at(-1)!.body.messages, 'toolu_w')?.content)).toContain('"first"');
      expect(fs.readdirSync(path.join(dir, '.durable-agent', 'signals')).sort()).toEqual(['go.json', 'go@toolu_w.taken']);
    });
  }, 60_000);
});
