/**
 * The journal writes what changed and nothing more, and folding it gives back exactly the run.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentContext, Message } from '../../machines/agent-loop.types.ts';
import { endTurnReply, scriptedModel, type ScriptedStep, toolUseReply } from '../../src/model/scripted-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { StoreCorruptError } from '../../src/store/errors.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { applyRecord, encodeRecord, snapshotContextOf } from '../../src/store/journal/journal-codec.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KB2 = 'lorem ipsum dolor sit amet, '.repeat(74);

function longScript(turns: number): ScriptedStep[] {
  const steps: ScriptedStep[] = [];
  for (let t = 1; t <= turns; t++) steps.push(toolUseReply([{ id: `toolu_${t}`, name: 'fetch_page', input: { page: t } }], `page ${t}`));
  steps.push(endTurnReply('read them all'));
  return steps;
}

const fetchPage = defineTool<{ page: number }>({
  name: 'fetch_page',
  description: 'Returns about 2 KB of text.',
  inputSchema: { type: 'object', properties: { page: { type: 'integer' } }, required: ['page'] },
  readOnly: true,
  run: ({ page }) => `${page}: ${KB2}`,
});

describe('bytes written per transition', () => {
  it('do not grow with the length of the run (turn 10 vs turn 1,000), and each tool result is written once', async () => {
    const turns = 1000;
    const bytesByTurn = new Map<number, number>();
    const observer = (event: RunEvent) => {
      if (event.type !== 'saved' || event.turn === 0) return;
      bytesByTurn.set(event.turn, (bytesByTurn.get(event.turn) ?? 0) + event.bytes);
    };
    const store = new FileStore(path.join(tempDir(), '.durable-agent'));
    const result = await startRun({ store, model: scriptedModel(longScript(turns)), tools: [fetchPage], task: 'read every page', maxTurns: turns, observer });
    expect(result.status).toBe('done');

    const at10 = bytesByTurn.get(10)!;
    const at1000 = bytesByTurn.get(1000)!;
    // The last turn also carries the final reply; compare the tool turns before it.
    const at999 = bytesByTurn.get(999)!;
    expect(at999 / at10).toBeLessThan(1.05);
    expect(at1000).toBeGreaterThan(0);
    // New content per turn is one ~2 KB result plus a small assistant message: written once, not twice.
    expect(at10).toBeLessThan(1.5 * KB2.length);
  }, 120_000);

  it('folds back to exactly the context the run had in memory', async () => {
    const fileStore = new FileStore(path.join(tempDir(), '.durable-agent'));
    const memoryStore = new MemoryStore();
    for (const store of [fileStore, memoryStore]) {
      await startRun({ store, model: scriptedModel(longScript(20)), tools: [fetchPage], task: 'read', maxTurns: 20 });
    }
    const fromFile = foldJournal(fileStore.location, await fileStore.load());
    const fromMemory = foldJournal(memoryStore.location, await memoryStore.load());
    expect(fromFile.context).toEqual(fromMemory.context);
    expect(fromFile.context.messages).toHaveLength(1 + 2 * 20 + 1);
    expect(fromFile.ledger.size).toBe(20);
  });
});

describe('encoding changes that are not appends', () => {
  const base: AgentContext = {
    task: 't',
    system: null,
    maxTurns: 3,
    turn: 0,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    messages: [{ role: 'user', content: 't' }],
    pending: [],
    results: [],
    decisions: [],
    awaiting: null,
    pausesInARow: 0,
    maxPausesInARow: 8,
    heldReply: null,
    finalText: null,
    failure: null,
  };

  it('writes the changed tail when a list is rewritten, and folds to the same context', () => {
    const r0 = encodeRecord(null, { seq: 0, at: 1, event: 'START', state: 'awaitingModel', context: base });
    const view = applyRecord(null, r0);
    const replaced: Message[] = [{ role: 'user', content: 'another start' }, { role: 'assistant', content: 'x' }];
    const next: AgentContext = { ...base, messages: replaced, pending: [{ id: 'p', name: 'n', input: { a: 1 } }] };
    const r1 = encodeRecord(view, { seq: 1, at: 2, event: 'REOPEN', state: 'awaitingModel', context: next });
    expect(r1.messages).toEqual({ from: 0, add: replaced });
    expect(r1.pending).toEqual([{ id: 'p', name: 'n', input: { a: 1 } }]);
    const folded = applyRecord(applyRecord(null, r0), r1);
    expect(snapshotContextOf(folded)).toEqual(next);
  });

  it('refuses a record that points at a ledger entry no record holds', async () => {
    const store = new MemoryStore();
    const r0 = encodeRecord(null, { seq: 0, at: 1, event: 'START', state: 'awaitingModel', context: base });
    await store.create({ format: 'durable-agent/journal', version: 1, runId: 'r', createdAt: 1 }, r0);
    await store.append({ ...r0, seq: 1, event: 'CLOSE_TURN', state: 'closed', messages: { from: 1, add: [{ role: 'user', content: [{ $ledger: 'ghost' }] }] } });
    const error = await store.load().then((loaded) => foldJournal(store.location, loaded)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreCorruptError);
    expect((error as Error).message).toContain('refers to ledger entry ghost, which no earlier record holds');
  });
});
