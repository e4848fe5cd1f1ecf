/**
 * The benchmark's naive baseline (bench/naive-store.ts) must be a correct store, or comparing
 * with it says nothing: a run killed anywhere resumes from it exactly as from our journal.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NaiveStore } from '../../bench/naive-store.ts';
import type { Message } from '../../machines/agent-loop.types.ts';
import { endTurnReply, scriptedModel, type ScriptedStep, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import type { RunStore } from '../../src/store/store.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const script = (): ScriptedStep[] => [
  toolUseReply([{ id: 't1', name: 'lookup', input: { q: 'a' } }]),
  toolUseReply([
    { id: 't2', name: 'send_email', input: { to: 'x@example.com' } },
    { id: 't3', name: 'lookup', input: { q: 'b' } },
  ]),
  toolUseReply([{ id: 't4', name: 'charge_card', input: { amount: 5 } }]),
  endTurnReply('done'),
];

async function messagesOf(store: RunStore): Promise<Message[]> {
  return foldJournal(store.location, await store.load()).context.messages;
}

async function uninterrupted(): Promise<Message[]> {
  const store = new MemoryStore();
  await startRun({ store, model: scriptedModel(script()), tools: countingTools().tools, task: 'three turns' });
  return messagesOf(store);
}

describe('the naive baseline store', () => {
  it('writes the whole checkpoint and the whole ledger as files', async () => {
    const dir = path.join(tempDir(), 'naive');
    await startRun({ store: new NaiveStore(dir), model: scriptedModel(script()), tools: countingTools().tools, task: 'three turns' });
    const ledger = JSON.parse(fs.readFileSync(path.join(dir, 'ledger.json'), 'utf8')) as { tool_use_id: string }[];
    expect(ledger.map((entry) => entry.tool_use_id)).toEqual(['t1', 't2', 't3', 't4']);
    const checkpoint = JSON.parse(fs.readFileSync(path.join(dir, 'checkpoint.json'), 'utf8')) as { state: string; context: { messages: Message[] } };
    expect(checkpoint.state).toBe('done');
    expect(checkpoint.context.messages).toEqual(await uninterrupted());
  });

  /** Kills a run at `crashAfter`, resumes it from a fresh store object, and says what happened. */
  async function killAndResume(newStore: () => RunStore, crashAfter: string) {
    const { tools, counter } = countingTools();
    const first = startRun({ store: newStore(), model: scriptedModel(script()), tools, task: 'three turns', crashAfter });
    await expect(first).rejects.toBeInstanceOf(SimulatedCrash);
    const decisions: string[] = [];
    const observer = (event: RunEvent) => {
      if (event.type === 'reconciled') decisions.push(`${event.call.id}:${event.decision}`);
    };
    const store = newStore();
    const result = await resumeRun({ store, model: scriptedModel(script()), tools, observer });
    return { status: result.status, decisions, runs: Object.fromEntries(counter.runs), messages: await messagesOf(store) };
  }

  for (const crashAfter of ['after-save-a:2', 'after-effect-write:2', 'after-effect-write:3', 'after-save-b:2', 'after-save-a:3', 'after-effect-write:4']) {
    it(`resumes a run killed ${crashAfter} exactly as our journal does`, async () => {
      const naiveDir = path.join(tempDir(), 'naive');
      const journalDir = path.join(tempDir(), '.durable-agent');
      const naive = await killAndResume(() => new NaiveStore(naiveDir), crashAfter);
      const ours = await killAndResume(() => new FileStore(journalDir), crashAfter);
      expect(naive).toEqual(ours);
      expect(naive.status).toBe('done');
      expect(Math.max(...Object.values(naive.runs))).toBe(1);
      if (crashAfter === 'after-effect-write:2') expect(naive.decisions).toEqual(['t2:reused', 't3:re-ran-read-only']);
      if (crashAfter === 'after-effect-write:3') expect(naive.decisions).toEqual(['t2:reused', 't3:reused']);
    });
  }
});
