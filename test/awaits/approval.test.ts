/**
 * A person in the loop, programmatically: approve, deny, edit, answer, a deadline, a run that
 * stops to wait and resumes once the decision is in its inbox, and crashes around a decision
 * (never asked twice), on MemoryStore and on a real FileStore.
 */
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { Message, ToolOutcome } from '../../machines/agent-loop.types.ts';
import { UnknownApprovalToolError } from '../../src/awaits/needs-decision.ts';
import type { DecisionHandler, DecisionReply, DecisionRequest } from '../../src/awaits/decision-step.ts';
import { DECISION_POLL_MS, DecisionReplyError } from '../../src/awaits/decision-step.ts';
import { endTurnReply, scriptedModel, type ScriptedStep, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { RunStoppedError } from '../../src/core/stop-errors.ts';
import { resumeRun, type RunParts, startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { readRunHistory, readRunStatus } from '../../src/runtime/run-status.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { MemoryDecisionInbox, MemoryStore } from '../../src/store/memory-store.ts';
import type { RunStore } from '../../src/store/store.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { toolResultOf } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

/** A real file store; its decisions arrive through an in-process inbox (the file inbox is tested with the CLI). */
const fileStoreWithInbox = (dir: string) => Object.assign(new FileStore(path.join(dir, '.durable-agent')), { decisions: new MemoryDecisionInbox() });

const STORES: Array<[string, () => RunStore & { decisions: MemoryDecisionInbox }]> = [
  ['MemoryStore', () => new MemoryStore()],
  ['FileStore', () => fileStoreWithInbox(tempDir())],
];

const emailScript = (input: unknown = { to: 'x@example.com' }): ScriptedStep[] => [
  toolUseReply([
    { id: 't1', name: 'lookup', input: { q: 'a' } },
    { id: 't2', name: 'send_email', input },
  ]),
  endTurnReply('done'),
];

function counting(reply: DecisionReply | null): { handler: DecisionHandler; asked: DecisionRequest[] } {
  const asked: DecisionRequest[] = [];
  return { asked, handler: (request) => (asked.push(request), reply) };
}

async function messagesOf(store: RunStore): Promise<Message[]> {
  return foldJournal(store.location, await store.load()).context.messages;
}

async function ledgerOf(store: RunStore): Promise<Map<string, ToolOutcome>> {
  return foldJournal(store.location, await store.load()).ledger;
}

function collect(): { events: RunEvent[]; observer: RunParts['observer'] } {
  const events: RunEvent[] = [];
  return { events, observer: (e) => events.push(e) };
}

describe.each(STORES)('a person in the loop (%s)', (_name, newStore) => {
  it('approves: the call runs once, after its DECISION record, and the decision is in the journal', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const { handler, asked } = counting({ verdict: 'approved', note: 'looks fine' });
    const { events, observer } = collect();
    const result = await startRun({ store, model: scriptedModel(emailScript()), tools, task: 't', requireApproval: ['send_email'], onDecision: handler, observer });
    expect(result.status).toBe('done');
    expect(counter.of('t1')).toBe(1);
    expect(counter.of('t2')).toBe(1);
    expect(asked.map((r) => [r.tool_use_id, r.name, r.needs])).toEqual([['t2', 'send_email', 'approval']]);
    const steps = await readRunHistory(store);
    expect(steps.map((s) => s.point)).toEqual(['save-start', 'model-reply', 'save-a', 'effect-write', 'save-waiting', 'save-decision', 'effect-write', 'save-b', 'model-reply', 'save-done']);
    const saved = events.flatMap((e) => (e.type === 'saved' || e.type === 'tool-started' || e.type === 'decided' ? [e.type === 'saved' ? e.point : e.type] : []));
    // The approval is durable before the call starts.
    expect(saved.indexOf('save-decision')).toBeLessThan(saved.lastIndexOf('tool-started'));
    const decided = events.find((e) => e.type === 'decided');
    expect(decided).toMatchObject({ decision: { tool_use_id: 't2', verdict: 'approved', by: 'api', note: 'looks fine' } });
    expect(toolResultOf(await messagesOf(store), 't2')).toMatchObject({ content: 'sent to x@example.com' });
  });

  it('denies: the call never runs, its ledger entry is the denial, and the model reads why', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const { handler } = counting({ verdict: 'denied', reason: 'not to that address', by: 'alice' });
    const result = await startRun({ store, model: scriptedModel(emailScript()), tools, task: 't', requireApproval: 'side-effects', onDecision: handler });
    expect(result.status).toBe('done');
    expect(counter.of('t2')).toBe(0);
    expect(toolResultOf(await messagesOf(store), 't2')).toEqual({
      type: 'tool_result',
      tool_use_id: 't2',
      content: 'denied by a person: not to that address',
      is_error: true,
    });
    expect((await ledgerOf(store)).get('t2')).toMatchObject({ kind: 'denied', is_error: true });
  });

  it('runs an edited input, and the result says a person changed it, and to what', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const { handler } = counting({ verdict: 'approved', input: { to: 'safe@example.com' } });
    await startRun({ store, model: scriptedModel(emailScript()), tools, task: 't', requireApproval: ['send_email'], onDecision: handler });
    expect(counter.of('t2')).toBe(1);
    const content = toolResultOf(await messagesOf(store), 't2')!.content as string;
    expect(content).toMatch(/^A person changed the input of this call before it ran; it ran with \{"to":"safe@example.com"\}\./);
    expect(content).toMatch(/sent to safe@example\.com$/);
  });

  it('refuses an edited input that does not match the schema, recording nothing', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const { handler } = counting({ verdict: 'approved', input: { to: 42 } });
    await expect(startRun({ store, model: scriptedModel(emailScript()), tools, task: 't', requireApproval: ['send_email'], onDecision: handler })).rejects.toThrow(
      DecisionReplyError,
    );
    expect(counter.of('t2')).toBe(0);
    expect((await readRunStatus(store)).state).toBe('awaitingDecision');
  });

  it('answers an ask_user question: the answer is the result, nothing runs', async () => {
    const store = newStore();
    const { tools } = countingTools();
    const { handler, asked } = counting({ verdict: 'answered', text: 'blue' });
    const script = [toolUseReply([{ id: 'q1', name: 'ask_user', input: { question: 'Which colour?' } }]), endTurnReply('blue it is')];
    const result = await startRun({ store, model: scriptedModel(script), tools, task: 't', allowQuestions: true, onDecision: handler });
    expect(result).toMatchObject({ status: 'done', text: 'blue it is' });
    expect(asked).toMatchObject([{ tool_use_id: 'q1', needs: 'answer', question: 'Which colour?' }]);
    expect(toolResultOf(await messagesOf(store), 'q1')).toEqual({ type: 'tool_result', tool_use_id: 'q1', content: 'blue' });
    expect((await ledgerOf(store)).get('q1')).toMatchObject({ kind: 'answered', is_error: false });
  });

  it('stops with status waiting (wait: false), then resumes once the decision is in the inbox', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const script = emailScript();
    const first = await startRun({ store, model: scriptedModel(script), tools, task: 't', requireApproval: ['send_email'], wait: false });
    expect(first.status).toBe('waiting');
    expect(first.waiting).toEqual([
      { runId: first.runId, tool_use_id: 't2', name: 'send_email', input: { to: 'x@example.com' }, needs: 'approval', since: expect.any(Number), awaited: true },
    ]);
    expect(counter.of('t2')).toBe(0);
    // Still nothing decided: a resume that may not wait stops again, writing nothing new.
    const records = (await store.load()).records.length;
    expect((await resumeRun({ store, model: scriptedModel(script), tools, requireApproval: ['send_email'], wait: false })).status).toBe('waiting');
    expect((await store.load()).records.length).toBe(records);
    await store.decisions.write({ tool_use_id: 't2', verdict: 'approved', by: 'bob', at: Date.now() });
    const second = await resumeRun({ store, model: scriptedModel(script), tools, requireApproval: ['send_email'], wait: false });
    expect(second.status).toBe('done');
    expect(counter.of('t2')).toBe(1);
    expect(await store.decisions.read()).toEqual([]);
  });

  it('an approval with edited input from the inbox runs with that input, after a resume too', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const parts = { model: scriptedModel(emailScript()), tools, requireApproval: ['send_email'], wait: false } as const;
    expect((await startRun({ ...parts, store, task: 't' })).status).toBe('waiting');
    await store.decisions.write({ tool_use_id: 't2', verdict: 'approved', input: { to: 'edited@example.com' }, by: 'bob', at: Date.now() });
    // The approval is recorded, then the process dies as the tool returns: the resume verifies nothing
    // (send_email cannot), so the call's state is unknown, and it is not run or asked again.
    await expect(resumeRun({ ...parts, store, crashAfter: 'after-tool-return:1' })).rejects.toThrow(SimulatedCrash);
    expect(counter.of('t2')).toBe(1);
    expect(counter.keys.get('t2')).toBeDefined();
    expect(await store.decisions.read()).toEqual([]);
    expect((await resumeRun({ ...parts, store })).status).toBe('done');
    expect(counter.of('t2')).toBe(1);
    const view = foldJournal(store.location, await store.load());
    expect(view.ledger.get('t2')).toMatchObject({ kind: 'unknown' });
  });

  it('runs the edited input from the inbox', async () => {
    const store = newStore();
    const { tools } = countingTools();
    await store.decisions.write({ tool_use_id: 't2', verdict: 'approved', input: { to: 'edited@example.com' }, by: 'bob', at: 1 });
    await startRun({ store, model: scriptedModel(emailScript()), tools, task: 't', requireApproval: ['send_email'], wait: false });
    expect(String(toolResultOf(await messagesOf(store), 't2')!.content)).toMatch(/"to":"edited@example.com".*\n\nsent to edited@example\.com$/s);
  });

  it('a waiting run picks up a decision written to its inbox while it waits', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const { events, observer } = collect();
    const running = startRun({ store, model: scriptedModel(emailScript()), tools, task: 't', requireApproval: ['send_email'], observer });
    while (!events.some((e) => e.type === 'waiting')) await new Promise((r) => setTimeout(r, 10));
    // Picked up at the run's next look, one poll later, whatever the machine's pace: the looks are
    // put on timers moved by hand (and the wait has no deadline, so nothing else could end it).
    const realTimeout = globalThis.setTimeout;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      while (vi.getTimerCount() === 0) await new Promise((r) => realTimeout(r, 10));
      await store.decisions.write({ tool_use_id: 't2', verdict: 'denied', reason: 'no', by: 'carol', at: Date.now() });
      await vi.advanceTimersByTimeAsync(DECISION_POLL_MS);
      while (!events.some((e) => e.type === 'decided')) {
        expect(vi.getTimerCount(), 'the run went on waiting after its next look').toBe(0);
        await new Promise((r) => realTimeout(r, 10));
      }
    } finally {
      vi.useRealTimers();
    }
    expect((await running).status).toBe('done');
    const decided = events.find((e) => e.type === 'decided');
    expect(decided).toMatchObject({ decision: { by: 'carol', verdict: 'denied' } });
    expect(counter.of('t2')).toBe(0);
    expect(events.find((e) => e.type === 'saved' && e.point === 'save-decision')!).toMatchObject({ at: expect.any(Number) });
  });

  it('a signal stops a waiting run at once; the wait is saved and a resume waits again', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const { events, observer } = collect();
    const controller = new AbortController();
    const running = startRun({ store, model: scriptedModel(emailScript()), tools, task: 't', requireApproval: ['send_email'], observer, signal: controller.signal });
    while (!events.some((e) => e.type === 'waiting')) await new Promise((r) => setTimeout(r, 10));
    // "At once" without a bound on time: the run's next look is put on a timer that never fires by
    // itself, so only the stop can end that pause; a pause deaf to it would hang the test.
    const realTimeout = globalThis.setTimeout;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      while (vi.getTimerCount() === 0) await new Promise((r) => realTimeout(r, 10));
      controller.abort('a person went home');
      await expect(running).rejects.toThrow(RunStoppedError);
    } finally {
      vi.useRealTimers();
    }
    expect((await readRunStatus(store)).state).toBe('awaitingDecision');
    const { handler } = counting({ verdict: 'approved' });
    expect((await resumeRun({ store, model: scriptedModel(emailScript()), tools, requireApproval: ['send_email'], onDecision: handler })).status).toBe('done');
    expect(counter.of('t2')).toBe(1);
  });

  it('denies by deadline what is still undecided when decisionTimeoutMs passes', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const result = await startRun({ store, model: scriptedModel(emailScript()), tools, task: 't', requireApproval: ['send_email'], decisionTimeoutMs: 300 });
    expect(result.status).toBe('done');
    expect(counter.of('t2')).toBe(0);
    expect(toolResultOf(await messagesOf(store), 't2')).toMatchObject({ content: 'denied by the decision deadline: no decision within 300 ms', is_error: true });
    const decision = (await readRunHistory(store)).find((s) => s.event === 'DECISION');
    expect(decision).toBeDefined();
  });

  it('checks the deadline on resume, counted from when the call began to wait', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const script = emailScript();
    expect((await startRun({ store, model: scriptedModel(script), tools, task: 't', requireApproval: ['send_email'], wait: false })).status).toBe('waiting');
    await new Promise((r) => setTimeout(r, 120));
    const { handler, asked } = counting(null);
    const resumed = await resumeRun({ store, model: scriptedModel(script), tools, requireApproval: ['send_email'], decisionTimeoutMs: 100, onDecision: handler, wait: false });
    expect(resumed.status).toBe('done');
    expect(asked).toEqual([]);
    expect(counter.of('t2')).toBe(0);
    const view = foldJournal(store.location, await store.load());
    expect(view.ledger.get('t2')).toMatchObject({ kind: 'denied', content: 'denied by the decision deadline: no decision within 100 ms' });
  });

  it('a resume that finds the decision already given does not announce a wait (no `waiting` event), only the decision', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const script = emailScript();
    expect((await startRun({ store, model: scriptedModel(script), tools, task: 't', requireApproval: ['send_email'], wait: false })).status).toBe('waiting');
    await store.decisions.write({ tool_use_id: 't2', verdict: 'approved', by: 'ana', at: Date.now() });
    const { events, observer } = collect();
    const resumed = await resumeRun({ store, model: scriptedModel(script), tools, requireApproval: ['send_email'], wait: false, observer });
    expect(resumed.status).toBe('done');
    expect(counter.of('t2')).toBe(1);
    expect(events.filter((e) => e.type === 'waiting')).toEqual([]);
    expect(events.filter((e) => e.type === 'decided').map((e) => e.type === 'decided' && e.decision.by)).toEqual(['ana']);
  });

  it('a decision given before the deadline wins although the run reads it after the deadline (a late resume)', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const script = emailScript();
    expect((await startRun({ store, model: scriptedModel(script), tools, task: 't', requireApproval: ['send_email'], wait: false })).status).toBe('waiting');
    const since = (await readRunStatus(store)).waiting[0]!.since!;
    await store.decisions.write({ tool_use_id: 't2', verdict: 'approved', by: 'ana', at: since + 50 });
    await new Promise((r) => setTimeout(r, 250));
    const resumed = await resumeRun({ store, model: scriptedModel(script), tools, requireApproval: ['send_email'], decisionTimeoutMs: 100, wait: false });
    expect(resumed.status).toBe('done');
    expect(counter.of('t2')).toBe(1);
    expect((await ledgerOf(store)).get('t2')).toMatchObject({ kind: 'ran' });
  });

  it('a decision given after the deadline comes too late: the deadline denies', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const script = emailScript();
    expect((await startRun({ store, model: scriptedModel(script), tools, task: 't', requireApproval: ['send_email'], wait: false })).status).toBe('waiting');
    const since = (await readRunStatus(store)).waiting[0]!.since!;
    await store.decisions.write({ tool_use_id: 't2', verdict: 'approved', by: 'ana', at: since + 150 });
    await new Promise((r) => setTimeout(r, 200));
    const resumed = await resumeRun({ store, model: scriptedModel(script), tools, requireApproval: ['send_email'], decisionTimeoutMs: 100, wait: false });
    expect(resumed.status).toBe('done');
    expect(counter.of('t2')).toBe(0);
    expect((await ledgerOf(store)).get('t2')).toMatchObject({ kind: 'denied' });
  });

  it('never asks twice: a crash right after the decision resumes without asking; the approved call follows the normal reconcile', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const { handler, asked } = counting({ verdict: 'approved' });
    const { events, observer } = collect();
    const script = [toolUseReply([{ id: 'c1', name: 'charge_card', input: { amount: 5 } }, { id: 'e1', name: 'send_email', input: { to: 'x' } }]), endTurnReply('done')];
    const parts = { model: scriptedModel(script), tools, requireApproval: ['charge_card', 'send_email'], onDecision: handler } as const;
    await expect(startRun({ ...parts, store, task: 't', crashAfter: 'after-save-decision:1' })).rejects.toThrow(SimulatedCrash);
    expect(counter.of('c1')).toBe(0);
    const result = await resumeRun({ ...parts, store, observer });
    expect(result.status).toBe('done');
    // c1 asked before the crash, e1 after it: each once.
    expect(asked.map((r) => r.tool_use_id)).toEqual(['c1', 'e1']);
    // Approved but not recorded: verify() says it did not happen, so it runs, once.
    expect(events.flatMap((e) => (e.type === 'reconciled' ? [`${e.call.id}:${e.decision}`] : []))).toEqual(['c1:verified-not-done-ran']);
    expect(counter.of('c1')).toBe(1);
    expect(counter.of('e1')).toBe(1);
  });

  it('a crash right after DECISION_NEEDED resumes waiting: asked again, decided once', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const { handler, asked } = counting({ verdict: 'approved' });
    const parts = { model: scriptedModel(emailScript()), tools, requireApproval: ['send_email'], onDecision: handler } as const;
    await expect(startRun({ ...parts, store, task: 't', crashAfter: 'after-save-waiting:1' })).rejects.toThrow(SimulatedCrash);
    expect(asked).toHaveLength(0);
    expect((await readRunStatus(store)).state).toBe('awaitingDecision');
    await resumeRun({ ...parts, store });
    expect(asked).toHaveLength(1);
    expect(counter.of('t2')).toBe(1);
    expect((await readRunHistory(store)).filter((s) => s.event === 'DECISION')).toHaveLength(1);
  });

  it('a crash after an approved call ran follows the normal reconcile (state unknown, not run again, not asked again)', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const { handler, asked } = counting({ verdict: 'approved' });
    const { events, observer } = collect();
    const parts = { model: scriptedModel(emailScript()), tools, requireApproval: ['send_email'], onDecision: handler } as const;
    await expect(startRun({ ...parts, store, task: 't', crashAfter: 'after-tool-return:2' })).rejects.toThrow(SimulatedCrash);
    expect(counter.of('t2')).toBe(1);
    await resumeRun({ ...parts, store, observer });
    expect(asked).toHaveLength(1);
    expect(counter.of('t2')).toBe(1);
    expect(events.flatMap((e) => (e.type === 'reconciled' ? [`${e.call.id}:${e.decision}`] : []))).toEqual(['t1:reused', 't2:unknown-reported']);
  });

  it('ignores (and clears) an inbox decision for a call already decided: a writer died between its record and the settle', async () => {
    const store = newStore();
    const { tools, counter } = countingTools();
    const { handler, asked } = counting(null);
    const parts = { model: scriptedModel(emailScript()), tools, requireApproval: ['send_email'], onDecision: handler } as const;
    await store.decisions.write({ tool_use_id: 't2', verdict: 'denied', reason: 'first', by: 'dave', at: 1 });
    // The inbox decision is recorded, then the process dies before settling it.
    await expect(startRun({ ...parts, store, task: 't', crashAfter: 'after-save-decision:1' })).rejects.toThrow(SimulatedCrash);
    expect(await store.decisions.read()).toHaveLength(1);
    const result = await resumeRun({ ...parts, store });
    expect(result.status).toBe('done');
    expect(asked).toEqual([]);
    expect(counter.of('t2')).toBe(0);
    const history = await readRunHistory(store);
    expect(history.filter((s) => s.event === 'DECISION')).toHaveLength(1);
    expect((await ledgerOf(store)).get('t2')).toMatchObject({ kind: 'denied', content: 'denied by a person: first' });
  });

  it('ignores an inbox decision whose verdict does not fit the call (an answer for an approval)', async () => {
    const store = newStore();
    const { tools } = countingTools();
    await store.decisions.write({ tool_use_id: 't2', verdict: 'answered', text: 'yes', by: 'eve', at: 1 });
    const result = await startRun({ store, model: scriptedModel(emailScript()), tools, task: 't', requireApproval: ['send_email'], wait: false });
    expect(result.status).toBe('waiting');
  });
});

describe('which calls need a decision', () => {
  it('refuses a requireApproval name the run does not offer, before anything is written', async () => {
    const store = new MemoryStore();
    const { tools } = countingTools();
    const start = startRun({ store, model: scriptedModel(emailScript()), tools, task: 't', requireApproval: ['send_mail'] });
    await expect(start).rejects.toThrow(UnknownApprovalToolError);
    await expect(start).rejects.toThrow(/send_mail.*lookup, send_email/);
    expect(await store.exists()).toBe(false);
  });

  it("'side-effects' flags every tool that is not read-only; a tool's needsApproval predicate flags by input", async () => {
    const store = new MemoryStore();
    const { tools } = countingTools();
    const guarded = tools.map((tool) => (tool.name === 'lookup' ? { ...tool, needsApproval: (input: { q: string }) => input.q === 'secret' } : tool));
    const script = [
      toolUseReply([
        { id: 'a', name: 'lookup', input: { q: 'a' } },
        { id: 'b', name: 'lookup', input: { q: 'secret' } },
        { id: 'c', name: 'send_email', input: { to: 'x' } },
        { id: 'd', name: 'nope', input: {} },
      ]),
      endTurnReply('done'),
    ];
    const result = await startRun({ store, model: scriptedModel(script), tools: guarded, task: 't', requireApproval: 'side-effects', wait: false });
    expect(result.status).toBe('waiting');
    const view = foldJournal(store.location, await store.load());
    expect(view.context.pending.map((call) => [call.id, call.needs ?? null])).toEqual([
      ['a', null],
      ['b', 'approval'],
      ['c', 'approval'],
      ['d', null],
    ]);
    expect(result.waiting!.map((call) => [call.tool_use_id, call.awaited])).toEqual([
      ['b', true],
      ['c', false],
    ]);
  });

  it('a throwing needsApproval predicate counts as yes', async () => {
    const store = new MemoryStore();
    const { tools } = countingTools();
    const guarded = tools.map((tool) => (tool.name === 'lookup' ? { ...tool, needsApproval: () => { throw new Error('cannot tell'); } } : tool));
    const script = [toolUseReply([{ id: 'a', name: 'lookup', input: { q: 'a' } }]), endTurnReply('done')];
    expect((await startRun({ store, model: scriptedModel(script), tools: guarded, task: 't', wait: false })).status).toBe('waiting');
  });

  it('journals written before decisions existed load and resume as before', async () => {
    const store = new MemoryStore();
    const { tools } = countingTools();
    await startRun({ store, model: scriptedModel(emailScript()), tools, task: 't' });
    for (const { record } of (await store.load()).records) {
      expect(record).not.toHaveProperty('decisions');
      expect(record).not.toHaveProperty('awaiting');
      for (const call of record.pending ?? []) expect(call).not.toHaveProperty('needs');
    }
  });
});
