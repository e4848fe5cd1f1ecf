/**
 * What sealing costs a run on the file store, end to end: the same run (N turns, each a tool call
 * returning ~2 KB, every record fdatasync'd as the runtime saves it) driven by startRun into a
 * FileStore with and without keys, in pairs of runs (paired-rounds.ts: the order alternating, the
 * ratio taken within each pair). Printed per turn, in milliseconds (medians), with the median of
 * the paired ratios and their interquartile range. The target: a turn with encryption at most
 * 1.15x without.
 *
 *     npm run bench:seal-store -- [--turns N] [--rounds N] [--result-bytes N]
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { endTurnReply, scriptedModel, toolUseReply } from '../src/model/scripted-model.ts';
import { startRun } from '../src/runtime/run-api.ts';
import { KeyRing } from '../src/seal/keys.ts';
import { FileStore } from '../src/store/file-store.ts';
import { defineTool } from '../src/tools/tool.ts';
import { measured, pairedReport, pairedRounds, type RunCost } from './paired-rounds.ts';

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '40' },
    rounds: { type: 'string', default: '40' },
    'result-bytes': { type: 'string', default: '2048' },
  },
});
const TURNS = Number(values.turns);
const ROUNDS = Number(values.rounds);
const RESULT_BYTES = Number(values['result-bytes']);

const page = 'Q3 sales notes: the North region closed 14 new accounts, revenue up 12%. '.repeat(Math.ceil(RESULT_BYTES / 72)).slice(0, RESULT_BYTES);
const fetchPage = defineTool<{ page: number }>({
  name: 'fetch_page',
  description: 'Returns a page of notes.',
  inputSchema: { type: 'object', properties: { page: { type: 'integer' } }, required: ['page'] },
  readOnly: true,
  run: ({ page: n }) => `${n}: ${page}`,
});
const keys = KeyRing.of([{ id: 'k1', key: randomBytes(32) }]);
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'da-seal-store-'));

/** One whole run; its cost per turn. */
async function oneRun(sealed: boolean, round: number): Promise<RunCost> {
  const script = Array.from({ length: TURNS }, (_, t) =>
    toolUseReply([{ id: `toolu_${t + 1}`, name: 'fetch_page', input: { page: t + 1 } }], `Reading page ${t + 1} of the notes before I summarise them.`),
  );
  const store = new FileStore(path.join(root, `${sealed ? 'sealed' : 'plain'}-${round}`, '.durable-agent'), sealed ? { keys } : {});
  const cost = await measured(TURNS, async () => {
    const result = await startRun({ store, model: scriptedModel([...script, endTurnReply('The report is written.')]), tools: [fetchPage], task: 'Summarise the Q3 sales notes.', maxTurns: TURNS + 1 });
    if (result.status !== 'done') throw new Error(`the run ended ${result.status}`);
  });
  store.close();
  return cost;
}

async function main(): Promise<void> {
  await oneRun(false, -1);
  await oneRun(true, -1);
  const pairs = await pairedRounds(ROUNDS, oneRun);
  console.log(`file store, ${TURNS} turns of a ~${RESULT_BYTES} B tool result, ${ROUNDS} pairs of runs, plain and sealed in turn (target: sealed at most 1.15x plain):`);
  for (const line of pairedReport(pairs, { base: 'plain', variant: 'sealed', unit: 'turn' })) console.log(line);
  fs.rmSync(root, { recursive: true, force: true });
}

await main();
