/**
 * A run's history as the visualizer reads it, from real runs of the demo on a real file store:
 * one step per record, the context at every step, the processes, the crash and the resume with
 * its reconcile decisions.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import { demoScript, DEMO_TASK, ensureSampleNotes } from '../../src/demo/demo-task.ts';
import { demoTools } from '../../src/demo/demo-tools.ts';
import { scriptedModel } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { readRunHistory } from '../../src/runtime/run-status.ts';
import { FileStore, JOURNAL_FILE } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { machineGraphOf } from '../../visualizer/machine-graph.ts';
import { ledgerAt, messagesAt } from '../../visualizer/page/run-replay.ts';
import { runViewOf } from '../../visualizer/run-timeline.ts';
import type { RunView } from '../../visualizer/viz-data.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const graph = machineGraphOf(agentLoopMachine);

interface DemoRun {
  dir: string;
  store: FileStore;
}

function demo(options: { verify?: boolean } = {}): DemoRun & { parts: (crashAfter?: string) => Parameters<typeof resumeRun>[0] } {
  const dir = tempDir('da-viz-');
  ensureSampleNotes(dir);
  const store = new FileStore(path.join(dir, '.durable-agent'));
  return {
    dir,
    store,
    parts: (crashAfter) => ({
      store: new FileStore(path.join(dir, '.durable-agent')),
      model: scriptedModel(demoScript()),
      tools: demoTools(dir, { verify: options.verify ?? true }),
      ...(crashAfter ? { crashAfter } : {}),
    }),
  };
}

async function crashThenResume(crashAfter: string, options: { verify?: boolean } = {}): Promise<DemoRun> {
  const run = demo(options);
  await expect(startRun({ ...run.parts(crashAfter), task: DEMO_TASK })).rejects.toBeInstanceOf(SimulatedCrash);
  const result = await resumeRun(run.parts());
  expect(result.status).toBe('done');
  return run;
}

async function viewOf(store: FileStore): Promise<RunView> {
  return runViewOf(store.location, await store.load(), graph);
}

describe('the lesson’s run: killed after the third ledger write, resumed', () => {
  it('has one step per record, the records’ facts, and the arrow each transition took', async () => {
    const { store } = await crashThenResume('after-effect-write:3');
    const view = await viewOf(store);
    const history = await readRunHistory(store);
    expect(view.steps.map((s) => [s.seq, s.state, s.event, s.point, s.turn, s.bytes])).toEqual(
      history.map((h) => [h.seq, h.state, h.event, h.point, h.turn, h.bytes]),
    );
    // START (the run's creation), REOPEN (a process taking it up) and MODEL_USAGE (taken in place): no arrow.
    const runtimeOnly = new Set(['START', 'REOPEN', 'MODEL_USAGE']);
    for (const step of view.steps.filter((s) => runtimeOnly.has(s.event))) expect(step.edge, `record ${step.seq}`).toBeNull();
    const transitions = view.steps.filter((s) => !runtimeOnly.has(s.event));
    expect(transitions.map((s) => s.edge)).toEqual([
      'awaitingModel->pendingTool',
      'pendingTool->effectRecorded',
      'effectRecorded->closed',
      'closed->pendingTool',
      'pendingTool->effectRecorded',
      'effectRecorded->closed',
      'closed->pendingTool',
      'pendingTool->effectRecorded',
      'effectRecorded->closed',
      'closed->done',
    ]);
    expect(transitions.map((s) => s.tools.join(','))).toEqual([
      'read_notes', 'read_notes', 'read_notes', 'count_words', 'count_words', 'count_words',
      'write_report', 'write_report', 'write_report', '',
    ]);
    expect(view.finished).toBe(true);
    expect(view.task).toBe(DEMO_TASK);
  });

  it('splits the run into the killed process and the resuming one, and shows the ledger hit it reused', async () => {
    const { store } = await crashThenResume('after-effect-write:3');
    const view = await viewOf(store);
    const history = await readRunHistory(store);
    const killedAt = history.filter((h) => h.point === 'effect-write')[2]!.seq;
    const lastSeq = history[history.length - 1]!.seq;
    expect(view.processes).toHaveLength(2);
    const [first, second] = view.processes as [RunView['processes'][0], RunView['processes'][0]];
    expect(first).toMatchObject({ firstSeq: 0, lastSeq: killedAt, end: 'stopped', resume: null, pid: process.pid });
    expect(second).toMatchObject({ firstSeq: killedAt + 1, lastSeq, end: 'finished', pid: process.pid });
    expect(second.resume).toEqual({
      fromSeq: killedAt,
      cutEnd: null,
      decisions: [
        { toolUseId: 'toolu_03', name: 'write_report', decision: 'reused', phrase: 'ledger hit, reusing result, not re-running', seq: null },
      ],
    });
    expect(view.steps.map((s) => s.process)).toEqual(history.map((h) => (h.seq <= killedAt ? 0 : 1)));
  });

  it('rebuilds the context at every step: pending calls, ledger, messages', async () => {
    const { store } = await crashThenResume('after-effect-write:3');
    const view = await viewOf(store);
    const loaded = await store.load();
    const contexts: Array<{ messages: unknown[]; pending: string[]; ledger: string[] }> = [];
    foldJournal(store.location, loaded, (durable) => {
      contexts.push({
        messages: structuredClone(durable.context.messages),
        pending: durable.context.pending.map((c) => c.id),
        ledger: [...durable.ledger.keys()],
      });
    });
    view.steps.forEach((step, index) => {
      const expected = contexts[index]!;
      expect(step.pending.map((c) => c.id), `record ${step.seq}`).toEqual(expected.pending);
      expect(ledgerAt(view, index).map((e) => e.toolUseId), `record ${step.seq}`).toEqual(expected.ledger);
      expect(messagesAt(view, index).length, `record ${step.seq}`).toBe(expected.messages.length);
    });
    // Checkpoint A of turn 3: write_report is pending with no result; the next record has it.
    const saveA = view.steps.find((s) => s.point === 'save-a' && s.turn === 3)!;
    expect(saveA.pending).toEqual([expect.objectContaining({ id: 'toolu_03', name: 'write_report', recorded: false })]);
    expect(saveA.next).toBe('run write_report (toolu_03), then write its ledger entry');
    const effect = view.steps[saveA.seq + 1]!;
    expect(effect.pending[0]!.recorded).toBe(true);
    expect(effect.ledgerWritten).toEqual(['toolu_03']);
    // A reply's tokens are counted in a record of their own before the reply is saved.
    const usageSteps = view.steps.filter((s) => s.event === 'MODEL_USAGE');
    expect(usageSteps.length).toBeGreaterThan(0);
    for (const step of usageSteps) expect(step.next).toBe('save the reply whose tokens this record counted (a resume from here asks the model again)');
    // The last message is the model's answer, as text.
    const last = messagesAt(view, view.steps.length - 1).at(-1)!;
    expect(last).toEqual({ role: 'assistant', blocks: [{ kind: 'text', text: 'Report written to report.txt, task complete.' }] });
  });
});

describe('other ways a run is resumed', () => {
  it('shows a side effect with no record and no verify() reported as unknown, with the record that wrote it', async () => {
    const { store } = await crashThenResume('after-save-a:3', { verify: false });
    const view = await viewOf(store);
    const decisions = view.processes[1]!.resume!.decisions;
    // Its first record is the reconcile's: nothing else is written before the open call is settled.
    const settledAt = view.processes[1]!.firstSeq;
    expect(decisions).toEqual([
      {
        toolUseId: 'toolu_03',
        name: 'write_report',
        decision: 'unknown-reported',
        phrase: 'ledger miss with side effects, unresolvable, appending is_error',
        seq: settledAt,
      },
    ]);
    expect(view.steps[settledAt]!.reconcile).toEqual(decisions[0]);
    expect(view.ledger.find((e) => e.toolUseId === 'toolu_03')).toMatchObject({ kind: 'unknown', isError: true, seq: settledAt });
  });

  it('shows a read-only call that had returned but was not recorded as run again', async () => {
    const { store } = await crashThenResume('after-tool-return:1');
    const view = await viewOf(store);
    expect(view.processes[1]!.resume!.decisions.map((d) => [d.toolUseId, d.decision, d.seq])).toEqual([
      ['toolu_01', 're-ran-read-only', view.processes[1]!.firstSeq],
    ]);
  });

  it('shows a run that is not finished, and a record cut off mid-write at the end of the journal', async () => {
    const run = demo();
    await expect(startRun({ ...run.parts('after-save-a:2'), task: DEMO_TASK })).rejects.toBeInstanceOf(SimulatedCrash);
    fs.appendFileSync(path.join(run.store.location, JOURNAL_FILE), '0badc0de {"seq":5,"sta');
    const view = await viewOf(run.store);
    expect(view.finished).toBe(false);
    expect(view.state).toBe('pendingTool');
    expect(view.processes.map((p) => p.end)).toEqual(['open']);
    expect(view.tornTail).toEqual({ offset: expect.any(Number), bytes: 22 });
    expect(view.steps.map((s) => s.seq)).toEqual((await readRunHistory(run.store)).map((h) => h.seq));
    expect(view.steps.at(-1)!.point).toBe('save-a');
  });

  it('shows a run reopened with more turns after it stopped at MAX_TURNS', async () => {
    const run = demo();
    const stopped = await startRun({ ...run.parts(), task: DEMO_TASK, maxTurns: 1 });
    expect(stopped.status).toBe('stoppedAtMaxTurns');
    expect((await resumeRun({ ...run.parts(), maxTurns: 5 })).status).toBe('done');
    const view = await viewOf(run.store);
    const reopen = view.steps.find((s) => s.event === 'REOPEN')!;
    expect(reopen.reopened).toEqual({ maxTurns: 5, previousState: 'stoppedAtMaxTurns' });
    expect(reopen.edge).toBeNull();
    // The first process ended cleanly at MAX_TURNS: a stop at a limit, which the resume left; not a crash.
    expect(view.processes.map((p) => p.end)).toEqual(['limit', 'finished']);
    expect(view.processes[1]!.resume!.decisions).toEqual([]);
  });
});
