/**
 * What sealing costs a run on the PostgreSQL store, end to end: the same run (N turns, each a
 * tool call returning ~2 KB, every record committed as the runtime saves it) driven by startRun
 * into a PgRunStore with and without keys, on a throwaway local cluster, in pairs of runs
 * (paired-rounds.ts: the order alternating, the ratio taken within each pair). Printed per turn,
 * in milliseconds (medians), with the median of the paired ratios and their interquartile range,
 * as seal-file-store.ts does for the file store.
 *
 *     npm run bench:seal-pg -- [--turns N] [--rounds N] [--result-bytes N]
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { endTurnReply, scriptedModel, toolUseReply } from '../src/model/scripted-model.ts';
import { startRun } from '../src/runtime/run-api.ts';
import { KeyRing } from '../src/seal/keys.ts';
import { PgRunStore } from '../src/store/pg/pg-store.ts';
import { openPool } from '../src/store/pg/pool.ts';
import { migrate } from '../src/store/pg/schema.ts';
import { defineTool } from '../src/tools/tool.ts';
import { startPostgres } from '../test/helpers/postgres-server.ts';
import { onExit } from './exit-cleanup.ts';
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

async function main(): Promise<void> {
  const server = await startPostgres();
  const stopServer = onExit('the PostgreSQL cluster', () => server.stop());
  const pool = openPool(server.url, 4);
  try {
    await migrate(pool);
    /** One whole run; its cost per turn (the CPU: this process's, not the server's). */
    const oneRun = async (sealed: boolean, round: number): Promise<RunCost> => {
      const script = Array.from({ length: TURNS }, (_, t) =>
        toolUseReply([{ id: `toolu_${t + 1}`, name: 'fetch_page', input: { page: t + 1 } }], `Reading page ${t + 1} of the notes before I summarise them.`),
      );
      const store = new PgRunStore(pool, `${sealed ? 'sealed' : 'plain'}-${round}`, sealed ? { keys } : {});
      return measured(TURNS, async () => {
        const result = await startRun({ store, model: scriptedModel([...script, endTurnReply('The report is written.')]), tools: [fetchPage], task: 'Summarise the Q3 sales notes.', maxTurns: TURNS + 1 });
        if (result.status !== 'done') throw new Error(`the run ended ${result.status}`);
      });
    };
    await oneRun(false, -1);
    await oneRun(true, -1);
    const pairs = await pairedRounds(ROUNDS, oneRun);
    const { rows } = await pool.query<{ sealed: boolean; bytes: string }>(
      "SELECT r.header ? 'sealed' AS sealed, avg(d.bytes) AS bytes FROM da_records d JOIN da_runs r ON r.id = d.run_id GROUP BY 1",
    );
    const bytesOf = (isSealed: boolean) => Number(rows.find((row) => row.sealed === isSealed)?.bytes ?? 0);
    console.log(`PostgreSQL store, ${TURNS} turns of a ~${RESULT_BYTES} B tool result, ${ROUNDS} pairs of runs, plain and sealed in turn (target: sealed at most 1.15x plain):`);
    for (const line of pairedReport(pairs, { base: 'plain', variant: 'sealed', unit: 'turn' })) console.log(line);
    console.log(`  bytes plain ${bytesOf(false).toFixed(0)} B, sealed ${bytesOf(true).toFixed(0)} B per record: ${(bytesOf(true) / bytesOf(false)).toFixed(3)}x`);
  } finally {
    await pool.end();
    stopServer();
  }
}

await main();
