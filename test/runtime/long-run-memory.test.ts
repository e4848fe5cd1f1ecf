/**
 * What a long-running process keeps must not grow with the number of turns (issue 14: "a
 * long-running process holds only the live context"). Each test here names one thing the
 * process used to keep for the whole run.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelReply } from '../../machines/agent-loop.types.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { LiveToolUseIds } from '../../src/runtime/live-tool-use-ids.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunResult } from '../../src/core/run-events.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const page = defineTool<{ n: number }>({
  name: 'read_page',
  description: 'reads page n',
  inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
  readOnly: true,
  run: ({ n }) => `page ${n}: ${'lorem ipsum dolor sit amet '.repeat(76)}`.slice(0, 2048),
});

/** ~2 KB a turn against a 4,000-token window: compacted every few turns. */
const WINDOW = 4_000;

function pageReply(n: number, id = `toolu_${n}`): ModelReply {
  return toolUseReply([{ id, name: 'read_page', input: { n } }], `Reading page ${n}.`);
}

function storeIn(dir: string): FileStore {
  return new FileStore(path.join(dir, '.durable-agent'));
}

/** 30 turns; turn 30 calls its tool under the id of turn 1, which compaction took out of the context long before. */
function reusingScript(): ModelReply[] {
  const steps = Array.from({ length: 29 }, (_, i) => pageReply(i + 1));
  steps.push(pageReply(30, 'toolu_1'));
  steps.push(endTurnReply('done'));
  return steps;
}

function options(store: FileStore) {
  return { store, model: scriptedModel(reusingScript()), tools: [page], task: 'read the pages', maxTurns: 30, compaction: { mode: 'client' as const, contextWindow: WINDOW } };
}

describe('the tool_use ids a reply must not reuse are those of the live context', () => {
  it('an id compaction took out of the context is judged alike by the process that ran all along and by a resumed one', async () => {
    // The process that ran all along.
    const straight = storeIn(tempDir());
    const ranAlong = await startRun(options(straight));
    straight.close();

    // The same run killed at turn 29 (the id of turn 1 long compacted away), resumed by a fresh driver.
    const killed = storeIn(tempDir());
    await expect(startRun({ ...options(killed), crashAfter: 'after-save-b:29' })).rejects.toBeInstanceOf(SimulatedCrash);
    killed.close();
    const again = storeIn(path.dirname(killed.dir));
    const resumed: RunResult = await resumeRun({ store: again, model: scriptedModel(reusingScript()), tools: [page] });
    again.close();

    const view = foldJournal(again.location, await again.load());
    expect(view.context.compacted?.times).toBeGreaterThan(3);
    expect(resumed.status).toBe('done');
    expect(ranAlong.status).toBe(resumed.status);
    expect(ranAlong.failure).toEqual(resumed.failure);
    expect(ranAlong.turn).toBe(30);
  });

  it('keeps only the ids of the live context: after a compaction, those of the turns it kept', () => {
    const ids = new LiveToolUseIds();
    const assistant = (n: number) => ({ role: 'assistant' as const, content: pageReply(n).content });
    const user = (n: number) => ({ role: 'user' as const, content: [{ type: 'tool_result', tool_use_id: `toolu_${n}`, content: 'x' }] });
    const base = { task: 't', system: null, maxTurns: 1000, turn: 0, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, pending: [], results: [], decisions: [], awaiting: null, pausesInARow: 0, maxPausesInARow: 8, heldReply: null, finalText: null, failure: null };
    let messages = [{ role: 'user' as const, content: 't' }] as Array<{ role: 'user' | 'assistant'; content: unknown }>;
    let compacted = null as { times: number; messages: number; replies: number } | null;
    for (let n = 1; n <= 1000; n++) {
      const context = { ...base, messages, compacted } as never;
      expect(ids.of(context).has(`toolu_${n}`)).toBe(false);
      ids.add(pageReply(n));
      messages = [...messages, assistant(n), user(n)];
      if (n % 10 === 0) {
        // A compaction: a summary in place of all but the last two turns.
        const dropped = messages.length - 5;
        compacted = { times: (compacted?.times ?? 0) + 1, messages: (compacted?.messages ?? 0) + dropped, replies: 0 };
        messages = [{ role: 'user', content: 'summary' }, ...messages.slice(-4)];
      }
    }
    const live = ids.of({ ...base, messages, compacted } as never);
    expect([...live].sort()).toEqual(['toolu_1000', 'toolu_999']);
  });
});
