/**
 * The lesson's exercises as tests: the three crash moments of a turn, and the Level 2 order bug.
 *   ① checkpoint A saved, the tool not started
 *   ② the tool finished, its ledger entry not written
 *   ③ checkpoint B saved
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { recordPlaceholderThenDie, PLACEHOLDER } from '../fixtures/wrong-order-executor.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { toolResultOf, toolUseProblems } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const TOOLS = {
  'read-only': { name: 'lookup', input: { q: 'notes' }, missBranch: 're-ran-read-only' },
  'side-effecting': { name: 'send_email', input: { to: 'boss@example.com' }, missBranch: 'unknown-reported' },
} as const;

type Kind = keyof typeof TOOLS;

async function crashAt(kind: Kind, label: string) {
  const { name, input } = TOOLS[kind];
  const world = countingTools();
  const store = new FileStore(path.join(tempDir(), '.durable-agent'));
  const model = () => scriptedModel([toolUseReply([{ id: 'toolu_x', name, input }]), endTurnReply('done')]);
  await expect(startRun({ store, model: model(), tools: world.tools, task: 'one call', crashAfter: label })).rejects.toThrow(SimulatedCrash);
  const onDisk = foldJournal(store.location, await store.load());
  const ranBeforeResume = world.counter.of('toolu_x');
  const events: RunEvent[] = [];
  const result = await resumeRun({ store: new FileStore(store.dir), model: model(), tools: world.tools, observer: (e) => events.push(e) });
  const final = foldJournal(store.location, await store.load());
  const branch = events.flatMap((e) => (e.type === 'reconciled' ? [e.decision] : []));
  return { onDisk, ranBeforeResume, ranAfter: world.counter.of('toolu_x'), branch, result, final };
}

describe.each(['read-only', 'side-effecting'] as const)('the three crash moments, %s tool', (kind) => {
  it('① A saved, tool not started: the call is pending, the ledger has no entry, resume takes the miss branch', async () => {
    const moment = await crashAt(kind, 'after-save-a:1');
    expect(moment.onDisk.state).toBe('pendingTool');
    expect(moment.onDisk.context.pending.map((c) => c.id)).toEqual(['toolu_x']);
    expect(moment.onDisk.ledger.has('toolu_x')).toBe(false);
    expect(moment.ranBeforeResume).toBe(0);
    expect(moment.branch).toEqual([TOOLS[kind].missBranch]);
    expect(moment.ranAfter).toBe(kind === 'read-only' ? 1 : 0);
    expect(toolUseProblems(moment.final.context.messages)).toEqual([]);
  });

  it('② tool finished, ledger not written: on disk exactly like ①, resolved exactly like ①', async () => {
    const one = await crashAt(kind, 'after-save-a:1');
    const two = await crashAt(kind, 'after-tool-return:1');
    // The code cannot tell ① from ②: same state, same context, same (empty) ledger…
    expect(two.onDisk.state).toBe(one.onDisk.state);
    expect(two.onDisk.context).toEqual(one.onDisk.context);
    expect([...two.onDisk.ledger.keys()]).toEqual([...one.onDisk.ledger.keys()]);
    // …and resolves both the same way, though in ② the tool had in fact run.
    expect(two.branch).toEqual(one.branch);
    expect(two.ranBeforeResume).toBe(1);
    if (kind === 'side-effecting') {
      // Not run a second time: the model is told the state is unknown instead.
      expect(two.ranAfter).toBe(1);
      expect(toolResultOf(two.final.context.messages, 'toolu_x')).toMatchObject({ is_error: true });
    } else {
      expect(two.ranAfter).toBe(2);
    }
  });

  it('③ B saved: nothing pending, the tool_result in messages, the ledger entry there, resume reconciles nothing', async () => {
    const moment = await crashAt(kind, 'after-save-b:1');
    expect(moment.onDisk.state).toBe('closed');
    expect(moment.onDisk.context.pending).toEqual([]);
    expect(moment.onDisk.ledger.has('toolu_x')).toBe(true);
    expect(toolResultOf(moment.onDisk.context.messages, 'toolu_x')).toMatchObject({ content: moment.onDisk.ledger.get('toolu_x')!.content });
    expect(moment.branch).toEqual([]);
    expect(moment.ranAfter).toBe(1);
    expect(moment.result.status).toBe('done');
  });
});

describe('Level 2: the ledger written before the tool runs', () => {
  for (const kind of ['read-only', 'side-effecting'] as const) {
    it(`with the wrong order, a ${kind} tool that never ran is taken as done on resume`, async () => {
      const { name, input } = TOOLS[kind];
      const world = countingTools();
      const store = new FileStore(path.join(tempDir(), '.durable-agent'));
      const model = () => scriptedModel([toolUseReply([{ id: 'toolu_x', name, input }]), endTurnReply('done')]);
      await expect(startRun({ store, model: model(), tools: world.tools, task: 't', crashAfter: 'after-save-a:1' })).rejects.toThrow(SimulatedCrash);
      await recordPlaceholderThenDie(store);

      const atCrash = foldJournal(store.location, await store.load());
      expect(atCrash.ledger.get('toolu_x')).toMatchObject({ content: PLACEHOLDER });

      const events: RunEvent[] = [];
      await resumeRun({ store: new FileStore(store.dir), model: model(), tools: world.tools, observer: (e) => events.push(e) });
      const final = foldJournal(store.location, await store.load());
      expect(events.flatMap((e) => (e.type === 'reconciled' ? [e.decision] : []))).toEqual(['reused']);
      expect(world.counter.of('toolu_x')).toBe(0);
      expect(toolResultOf(final.context.messages, 'toolu_x')).toMatchObject({ content: PLACEHOLDER });
    });

    it(`with the product's order, the same crash leaves no ledger entry and the ${kind} tool is handled correctly`, async () => {
      const moment = await crashAt(kind, 'after-save-a:1');
      expect(moment.onDisk.ledger.size).toBe(0);
      expect(moment.branch).toEqual([TOOLS[kind].missBranch]);
      if (kind === 'read-only') {
        expect(moment.ranAfter).toBe(1);
        expect(toolResultOf(moment.final.context.messages, 'toolu_x')).toMatchObject({ content: 'answer to notes' });
      } else {
        expect(moment.ranAfter).toBe(0);
        expect(toolResultOf(moment.final.context.messages, 'toolu_x')).toMatchObject({ is_error: true });
      }
    });
  }
});
