/**
 * Durable waits in one process, on the real file store: the wait tool sleeps until its time or
 * its event, the deadline is the journal's (the DECISION_NEEDED record's time plus the input's
 * seconds), a resume before it waits the rest and one after it goes on at once; a signal is taken
 * once into the journal (sent twice, or with an id sent again after it was taken), one sent
 * before the wait is kept for it, and a kill between the signal's take and its DECISION record
 * leaves it bound to that wait alone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { Message } from '../../machines/agent-loop.types.ts';
import { decide } from '../../src/awaits/decide.ts';
import { sendSignal, SignalRefusedError } from '../../src/awaits/send-signal.ts';
import { waitTool } from '../../src/awaits/wait-tool.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { FileSignalInbox } from '../../src/store/inbox/file-signal-inbox.ts';
import type { JournalRecord } from '../../src/store/journal/journal-record.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/testing.ts';
import { toolResultOf } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

type Input = Record<string, unknown>;

/** The text the wait's result gave the model, echoed as the final answer. */
function echo(id: string) {
  return (messages: readonly Message[]) => {
    const result = toolResultOf(messages, id);
    return endTurnReply(`result: ${typeof result?.content === 'string' ? result.content : JSON.stringify(result?.content)}`);
  };
}

function model(waits: Array<{ id: string; input: Input }>) {
  return scriptedModel(scriptSteps(waits));
}

function storeIn(dir: string): FileStore {
  return new FileStore(path.join(dir, '.durable-agent'));
}

const parts = (store: FileStore, waits: Array<{ id: string; input: Input }>, wait = true) => ({ store, model: model(waits), tools: [waitTool()], maxTurns: 5, wait });

async function records(store: FileStore): Promise<JournalRecord[]> {
  return (await store.load()).records.map((stored) => stored.record);
}

async function decisionsOf(store: FileStore) {
  return (await records(store)).filter((record) => record.event === 'DECISION').flatMap((record) => record.decisions?.add ?? []);
}

async function waitingSince(store: FileStore): Promise<number> {
  const view = foldJournal(store.location, await store.load());
  return view.context.awaiting!.since;
}

describe('the wait tool on the clock', () => {
  it('sleeps for { seconds }, ends at the journal’s deadline, and the model gets what ended it', async () => {
    const store = storeIn(tempDir());
    const started = Date.now();
    const result = await startRun({ ...parts(store, [{ id: 'toolu_w1', input: { seconds: 0.6 } }]), task: 'wait a bit' });
    expect(result.status).toBe('done');
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    const [decision] = await decisionsOf(store);
    const needed = (await records(store)).find((record) => record.event === 'DECISION_NEEDED')!;
    // The deadline is the DECISION_NEEDED record's time plus the input's seconds, and the decision is made at it.
    expect(decision).toMatchObject({ tool_use_id: 'toolu_w1', verdict: 'answered', by: 'clock', at: needed.at + 600 });
    expect(result.text).toContain('result: The wait is over (0.6 s): it is ');
  });

  it('{ until }: a time already past goes on at once', async () => {
    const store = storeIn(tempDir());
    const result = await startRun({ ...parts(store, [{ id: 'toolu_w1', input: { until: '2001-01-01T00:00:00Z' } }]), task: 'wait' });
    expect(result.text).toContain('it is 2001-01-01T00:00:00.000Z');
  });

  it('a resume before the deadline waits the rest of it; one after it goes on at once and says how late', async () => {
    // The clock is moved rather than waited for, so no bound on elapsed time is needed: a resume
    // that started the clock again would wait an hour (or a minute) more and the test would time out.
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    try {
      const early = storeIn(tempDir());
      const hour = [{ id: 'toolu_w1', input: { seconds: 3600 } }];
      expect((await startRun({ ...parts(early, hour, false), task: 'wait' })).status).toBe('waiting');
      const since = await waitingSince(early);
      vi.setSystemTime(since + 3_600_000 - 300);
      const resumed = await resumeRun(parts(early, hour));
      expect(resumed.status).toBe('done');
      // It waited the rest (300 ms), not less, and its result is made at the journal's deadline.
      expect(Date.now()).toBeGreaterThanOrEqual(since + 3_600_000);
      expect((await decisionsOf(early))[0]).toMatchObject({ by: 'clock', at: since + 3_600_000 });
      expect(resumed.text).not.toMatch(/stopped meanwhile/);

      const late = storeIn(tempDir());
      const minute = [{ id: 'toolu_w1', input: { seconds: 60 } }];
      expect((await startRun({ ...parts(late, minute, false), task: 'wait' })).status).toBe('waiting');
      const lateSince = await waitingSince(late);
      vi.setSystemTime(lateSince + 60_000 + 1_200);
      const after = await resumeRun(parts(late, minute));
      expect(after.text).toMatch(/The run was stopped meanwhile and goes on [12] s later/);
      expect((await decisionsOf(late))[0]).toMatchObject({ by: 'clock', at: lateSince + 60_000 });
    } finally {
      vi.useRealTimers();
    }
  });

  it('a person can stop a wait with a denial; approving or answering one is refused', async () => {
    const store = storeIn(tempDir());
    const waits = [{ id: 'toolu_w1', input: { event: 'never' } }];
    expect((await startRun({ ...parts(store, waits, false), task: 'wait' })).status).toBe('waiting');
    await expect(decide(store, { tool_use_id: 'toolu_w1', verdict: 'approved' })).rejects.toThrow(/is a wait \(wait\): it ends when its time or its event comes/);
    await expect(decide(store, { tool_use_id: 'toolu_w1', verdict: 'answered', text: 'now' })).rejects.toThrow(/not by an answer/);
    await decide(store, { tool_use_id: 'toolu_w1', verdict: 'denied', reason: 'no longer needed', by: 'ana' });
    const result = await resumeRun(parts(store, waits));
    expect(result.text).toBe('result: denied by a person: no longer needed');
  });

  it('an input that is no wait is not waited on: the call fails with what to give instead', async () => {
    const store = storeIn(tempDir());
    const result = await startRun({ ...parts(store, [{ id: 'toolu_w1', input: { seconds: 1, event: 'x' } }]), task: 'wait' });
    expect(result.text).toContain('This wait cannot be done: it gives seconds and event; give one.');
    expect(await decisionsOf(store)).toEqual([]);
  });
});

describe('the wait tool on an event', () => {
  it('takes a signal sent while it waits, with its data, once; a second send of it finds it taken', async () => {
    const dir = tempDir();
    const store = storeIn(dir);
    const waits = [{ id: 'toolu_w1', input: { event: 'deploy-done', timeoutSeconds: 30 } }];
    const running = startRun({ ...parts(store, waits), task: 'wait for the deploy' });
    await vi.waitFor(async () => expect((await store.exists()) && foldJournal(store.location, await store.load()).state === 'awaitingDecision').toBe(true), { timeout: 10_000, interval: 20 });
    const sent = await sendSignal(storeIn(dir), { name: 'deploy-done', data: { version: '1.4.2' }, id: 'build-7', by: 'ci' });
    expect(sent).toMatchObject({ delivery: { outcome: 'delivered' }, waitingCall: 'toolu_w1' });
    const result = await running;
    expect(result.text).toMatch(/^result: The event deploy-done arrived \(sent by ci at .*, id build-7\)\.\nIts data: \{"version":"1.4.2"\}$/);
    expect(await decisionsOf(store)).toEqual([expect.objectContaining({ by: 'ci', verdict: 'answered', signal: { name: 'deploy-done', id: 'build-7', sentAt: sent.signal.at } })]);
    // A retry of the same id, after the wait took it: nothing delivered (the run has ended: refused before that).
    expect(await new FileSignalInbox(store.location).send({ ...sent.signal, at: Date.now() })).toEqual({ outcome: 'taken', tool_use_id: 'toolu_w1' });
    await expect(sendSignal(storeIn(dir), { name: 'deploy-done' })).rejects.toThrow(SignalRefusedError);
  });

  it('keeps a signal sent before any call waits for it; sent twice before it is taken, it is taken once', async () => {
    const dir = tempDir();
    const store = storeIn(dir);
    // Two waits for the same event, one after the other: the first takes the signal, the second finds none and times out.
    const waits = [
      { id: 'toolu_w1', input: { event: 'go', timeoutSeconds: 5 } },
      { id: 'toolu_w2', input: { event: 'go', timeoutSeconds: 0.3 } },
    ];
    const steps = [toolUseReply([{ id: 'toolu_l', name: 'look', input: {} }]), ...scriptSteps(waits)];
    const look = { name: 'look', description: 'Look.', inputSchema: { type: 'object' }, readOnly: true, run: () => 'nothing yet' };
    expect((await startRun({ store, model: scriptedModel(steps), tools: [waitTool(), look], maxTurns: 1, task: 'wait for go' })).status).toBe('stoppedAtMaxTurns');
    // The run does not wait for go yet: the signals are kept.
    const once = await sendSignal(storeIn(dir), { name: 'go', data: 1, by: 'ops' });
    const twice = await sendSignal(storeIn(dir), { name: 'go', data: 2, by: 'ops' });
    expect([once.delivery, once.waitingCall, twice.delivery]).toEqual([{ outcome: 'delivered' }, null, { outcome: 'waiting' }]);
    expect((await storeIn(dir).signals.waiting()).map((signal) => signal.data)).toEqual([1]);
    const result = await resumeRun({ store, model: scriptedModel(steps), tools: [waitTool(), look], maxTurns: 5 });
    expect(result.status).toBe('done');
    const decisions = await decisionsOf(store);
    expect(decisions.map((decision) => [decision.tool_use_id, decision.by])).toEqual([
      ['toolu_w1', 'ops'],
      ['toolu_w2', 'clock'],
    ]);
    expect(decisions[0]!.text).toContain('Its data: 1');
    expect(result.text).toContain('No event go came within the time');
    expect(await storeIn(dir).signals.waiting()).toEqual([]);
  });

  it('a signal taken by a wait whose process died before its DECISION record is that wait’s, and no other’s', async () => {
    const dir = tempDir();
    const store = storeIn(dir);
    const waits = [
      { id: 'toolu_w1', input: { event: 'go', timeoutSeconds: 5 } },
      { id: 'toolu_w2', input: { event: 'go', timeoutSeconds: 0.3 } },
    ];
    expect((await startRun({ ...parts(store, waits, false), model: scriptedModel(scriptSteps(waits)), task: 'wait for go' })).status).toBe('waiting');
    await sendSignal(storeIn(dir), { name: 'go', data: 'first', by: 'ops' });
    // What a kill right after the take leaves: the signal bound to toolu_w1 (renamed), no DECISION record yet.
    expect(await new FileSignalInbox(store.location).take('go', 'toolu_w1', Number.POSITIVE_INFINITY)).toMatchObject({ data: 'first' });
    expect(await decisionsOf(store)).toEqual([]);
    await sendSignal(storeIn(dir), { name: 'go', data: 'second', by: 'ops' });
    const result = await resumeRun({ store, model: scriptedModel(scriptSteps(waits)), tools: [waitTool()], maxTurns: 5 });
    expect(result.status).toBe('done');
    const decisions = await decisionsOf(store);
    // The bound signal is toolu_w1's; the second one, sent later, is toolu_w2's: each taken once.
    expect(decisions.map((decision) => [decision.tool_use_id, decision.text?.split('\n')[1]])).toEqual([
      ['toolu_w1', 'Its data: "first"'],
      ['toolu_w2', 'Its data: "second"'],
    ]);
    const files = fs.readdirSync(path.join(store.location, 'signals')).sort();
    expect(files).toEqual(['go@toolu_w1.taken', 'go@toolu_w2.taken']);
  });

  it('a signal with an id is delivered once however often it is sent, and is refused for a run that is not there', async () => {
    const dir = tempDir();
    const inbox = new FileSignalInbox(path.join(dir, '.durable-agent'));
    const signal = { name: 'paid', id: 'inv-1', data: null, by: 'billing', at: 1000 };
    expect(await inbox.send(signal)).toEqual({ outcome: 'delivered' });
    expect(await inbox.send({ ...signal, at: 2000 })).toEqual({ outcome: 'waiting' });
    expect(await inbox.send({ ...signal, id: 'inv-2', at: 1500 })).toEqual({ outcome: 'delivered' });
    expect(await inbox.take('paid', 'toolu_a', 5000)).toMatchObject({ id: 'inv-1' });
    expect(await inbox.send({ ...signal, at: 3000 })).toEqual({ outcome: 'taken', tool_use_id: 'toolu_a' });
    // Sent after the wait's deadline: not for that wait.
    expect(await inbox.take('paid', 'toolu_b', 1200)).toBeNull();
    expect(await inbox.take('paid', 'toolu_b', 5000)).toMatchObject({ id: 'inv-2' });
    expect(await inbox.takenBy('toolu_a')).toMatchObject({ id: 'inv-1' });
    expect(await inbox.waiting()).toEqual([]);
    await expect(sendSignal(storeIn(tempDir()), { name: 'paid' })).rejects.toThrow(/No run is stored at/);
    await expect(sendSignal(storeIn(dir), { name: 'no/such' })).rejects.toThrow(/is not an event name/);
  });
});

/** The replies of a run whose turns are these waits, each told what ended the one before. */
function scriptSteps(waits: Array<{ id: string; input: Input }>) {
  return [
    ...waits.map(({ id, input }) => toolUseReply([{ id, name: 'wait', input }])),
    echo(waits.at(-1)!.id),
  ];
}

