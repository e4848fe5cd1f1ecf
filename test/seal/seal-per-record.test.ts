/**
 * What a record costs to seal does not grow with the run: each record of a real run seals only
 * the content it adds (a turn's reply, its call's input, the tool's result), never the
 * conversation again. A record that restated the whole message list would seal one more value a
 * turn, and a long run would pay for its length at every save. The values are counted, not timed.
 */
import { describe, expect, it } from 'vitest';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { sealRecordContent } from '../../src/seal/record-content.ts';
import type { JournalRecord } from '../../src/store/journal/journal-record.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { defineTool } from '../../src/tools/tool.ts';

const TURNS = 24;

async function recordsOfRun(): Promise<JournalRecord[]> {
  const lookUp = defineTool<{ page: number }>({
    name: 'look_up',
    description: 'Returns a page.',
    inputSchema: { type: 'object', properties: { page: { type: 'integer' } }, required: ['page'] },
    readOnly: true,
    run: ({ page }) => `page ${page}: the North region closed 14 new accounts`,
  });
  const script = Array.from({ length: TURNS }, (_, t) => toolUseReply([{ id: `toolu_${t + 1}`, name: 'look_up', input: { page: t + 1 } }], `Reading page ${t + 1}.`));
  const store = new MemoryStore();
  const result = await startRun({ store, model: scriptedModel([...script, endTurnReply('Done.')]), tools: [lookUp], task: 'Read the pages.', maxTurns: TURNS + 1 });
  expect(result.status).toBe('done');
  return (await store.load()).records.map((stored) => stored.record);
}

/** The places a record's sealing seals, in order. */
function placesSealed(record: JournalRecord): string[] {
  const places: string[] = [];
  sealRecordContent(record, {
    keyId: 'rk-0000000000000000',
    seal: (_value, field) => {
      places.push(field);
      return 'sealed';
    },
  });
  return places;
}

describe('sealing a record', () => {
  it('seals only what the record adds, as many values in the last turn as in the second', async () => {
    const records = await recordsOfRun();
    const perTurn = (turn: number) =>
      records.filter((record) => record.turn === turn && record.event !== 'START').map((record) => `${record.event}:${placesSealed(record).length}`);
    expect(perTurn(TURNS)).toEqual(perTurn(2));
    // A reply with a text and one call: its text and the call's input; a tool's result: its content.
    const reply = records.find((record) => record.event === 'MODEL_REPLY' && record.turn === TURNS)!;
    expect(placesSealed(reply)).toEqual([`message/${2 * TURNS - 1}/0.text`, `message/${2 * TURNS - 1}/1.input`]);
    const sealedAll = records.reduce((sum, record) => sum + placesSealed(record).length, 0);
    // The task, each turn's three values, the final answer and a finished run's state: linear in the turns.
    expect(sealedAll).toBeLessThan(3 * TURNS + 10);
  });
});
