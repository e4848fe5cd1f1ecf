/**
 * `inspect` on startRun/resumeRun: the run reported as XState reports an actor, so an inspector
 * written for XState (`createSkyInspector().inspect` from @statelyai/inspect) can watch it.
 * Checked against a real XState actor of the same machine fed the same events.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ActorOptions, createActor, type InspectionEvent } from 'xstate';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import type { AgentEvent } from '../../machines/agent-loop.types.ts';
import { endTurnReply, scriptedModel, stopReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { InspectedRunSendError } from '../../src/runtime/run-inspection.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const MACHINE_EVENTS = new Set(['MODEL_REPLY', 'MODEL_REPLY_INVALID', 'TOOL_RESULT', 'CLOSE_TURN']);
const INSPECTED = new Set(['@xstate.actor', '@xstate.event', '@xstate.snapshot']);

const script = () => [
  stopReply('pause_turn', 'searching…'),
  toolUseReply([
    { id: 't1', name: 'lookup', input: { q: 'a' } },
    { id: 't2', name: 'send_email', input: { to: 'b' } },
  ]),
  endTurnReply('all done'),
];

function newStore(): FileStore {
  return new FileStore(path.join(tempDir(), '.durable-agent'));
}

/** What an inspector sees, in a form two runs can be compared by. */
function digest(event: InspectionEvent): string {
  switch (event.type) {
    case '@xstate.actor':
      return 'actor';
    case '@xstate.event':
      return `event ${event.event.type}`;
    case '@xstate.snapshot': {
      const snapshot = event.snapshot as ReturnType<typeof agentLoopMachine.getInitialSnapshot>;
      const { messages, pending, results, turn, finalText } = snapshot.context;
      return `snapshot ${event.event.type} → ${String(snapshot.value)} (${snapshot.status}) ${JSON.stringify({ messages, pending, results, turn, finalText })}`;
    }
    default:
      return event.type;
  }
}

describe('inspecting a run', () => {
  it('reports what a real XState actor of the machine reports for the same events, plus the driver’s MODEL_USAGE', async () => {
    const inspected: InspectionEvent[] = [];
    const { tools } = countingTools();
    // Typed as XState's own option: whatever createActor takes as `inspect`, a run takes too.
    const inspect: NonNullable<ActorOptions<typeof agentLoopMachine>['inspect']> = (e) => inspected.push(e);
    const result = await startRun({ store: newStore(), model: scriptedModel(script()), tools, task: 'the task', inspect });
    expect(result.status).toBe('done');

    const fromRun = inspected.filter((e) => !('event' in e) || e.event.type !== 'MODEL_USAGE');
    const sent = inspected.flatMap((e) => (e.type === '@xstate.event' && MACHINE_EVENTS.has(e.event.type) ? [e.event as AgentEvent] : []));
    expect(sent.map((e) => e.type)).toEqual(['MODEL_REPLY', 'MODEL_REPLY', 'TOOL_RESULT', 'TOOL_RESULT', 'CLOSE_TURN', 'MODEL_REPLY']);

    const fromActor: InspectionEvent[] = [];
    const actor = createActor(agentLoopMachine, { input: { task: 'the task', maxTurns: 20 }, inspect: (e) => fromActor.push(e) });
    actor.start();
    for (const event of sent) actor.send(event);
    expect(actor.getSnapshot().value).toBe('done');

    const comparable = (events: InspectionEvent[]) => events.filter((e) => INSPECTED.has(e.type)).map(digest);
    expect(comparable(fromRun)).toEqual(comparable(fromActor));
    // The driver's own bookkeeping: one MODEL_USAGE per model reply, as event and snapshot.
    expect(inspected.filter((e) => e.type === '@xstate.event' && e.event.type === 'MODEL_USAGE')).toHaveLength(3);
  });

  it('reports each transition only once it is saved', async () => {
    const log: string[] = [];
    const { tools } = countingTools();
    await startRun({
      store: newStore(),
      model: scriptedModel(script()),
      tools,
      task: 't',
      observer: (e: RunEvent) => {
        if (e.type === 'saved') log.push(`saved ${e.state}`);
      },
      inspect: (e) => {
        if (e.type === '@xstate.snapshot') log.push(`inspected ${String((e.snapshot as unknown as { value: string }).value)}`);
      },
    });
    const inspectedAt = log.flatMap((line, i) => (line.startsWith('inspected') ? [i] : []));
    expect(inspectedAt.length).toBeGreaterThan(5);
    for (const i of inspectedAt) {
      // The initial snapshot is inspected right after the record that created the run, like every other.
      expect(log[i - 1], `before ${log[i]}`).toBe(log[i]!.replace('inspected', 'saved'));
    }
  });

  it('gives an inspector what @statelyai/inspect reads from an actor: id, session, machine definition, snapshots as JSON', async () => {
    const inspected: InspectionEvent[] = [];
    const { tools } = countingTools();
    const result = await startRun({ store: newStore(), model: scriptedModel(script()), tools, task: 't', inspect: { next: (e) => inspected.push(e) } });
    const actorEvent = inspected[0]!;
    expect(actorEvent.type).toBe('@xstate.actor');
    const ref = actorEvent.actorRef as typeof actorEvent.actorRef & { id: string; logic: typeof agentLoopMachine; _parent?: unknown };
    expect(ref.id).toBe(result.runId);
    expect(ref.sessionId).toBe(`${result.runId}#0`);
    expect(actorEvent.rootId).toBe(ref.sessionId);
    expect(ref._parent).toBeUndefined();
    // The definition an inspector draws, serialized the way @statelyai/inspect does it.
    const definition = JSON.parse(JSON.stringify(ref.logic.config, (_key, value: unknown) => (typeof value === 'function' ? { type: value.name } : value)));
    expect(Object.keys(definition.states)).toEqual(Object.keys(agentLoopMachine.root.states));
    expect(definition.id).toBe('agentLoop');
    for (const event of inspected) {
      expect(event.actorRef).toBe(ref);
      if (event.type === '@xstate.snapshot') expect(JSON.parse(JSON.stringify(event.snapshot))).toHaveProperty('value');
    }
    expect(ref.getSnapshot()).toMatchObject({ value: 'done', status: 'done' });
    expect(() => ref.send({ type: 'MODEL_REPLY' })).toThrow(InspectedRunSendError);
  });

  it('reports a resumed run as a new session from the record it goes on from', async () => {
    const store = newStore();
    const { tools } = countingTools();
    await expect(startRun({ store, model: scriptedModel(script()), tools, task: 't', crashAfter: 'after-effect-write:1' })).rejects.toThrow(SimulatedCrash);
    store.close();
    const recordsAtCrash = (await store.load()).records.length;
    const inspected: InspectionEvent[] = [];
    const result = await resumeRun({ store, model: scriptedModel(script()), tools, inspect: (e) => inspected.push(e) });
    expect(inspected.slice(0, 3).map(digest).map((line) => line.split(' (')[0])).toEqual(['actor', 'event xstate.init', 'snapshot xstate.init → effectRecorded']);
    expect(inspected[0]!.actorRef.sessionId).toBe(`${result.runId}#${recordsAtCrash - 1}`);
    expect(inspected.filter((e) => e.type === '@xstate.event').map((e) => (e as { event: { type: string } }).event.type)).toEqual([
      'xstate.init',
      'TOOL_RESULT',
      'CLOSE_TURN',
      'MODEL_USAGE',
      'MODEL_REPLY',
    ]);
  });

  it('detaches an inspector that throws, with a process warning, and the run goes on', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      let calls = 0;
      const { tools } = countingTools();
      const result = await startRun({
        store: newStore(),
        model: scriptedModel(script()),
        tools,
        task: 't',
        inspect: () => {
          calls += 1;
          if (calls === 4) throw new Error('inspector bug');
        },
      });
      expect(result.status).toBe('done');
      expect(calls).toBe(4);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => w.message)).toEqual(["The run's inspector threw (inspector bug) and was detached; the run goes on."]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
