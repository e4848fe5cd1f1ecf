/**
 * What sealing a run's content costs per turn: the records of one typical turn (the model's
 * usage, its reply with a tool call, the tool's ~2 KB result, the turn's close), taken from a run
 * the runtime wrote, framed as the file store frames them (JSON and CRC) and parsed back, with
 * and without sealing and opening their content. Printed per turn, in microseconds (medians of
 * interleaved rounds), with the ratio, and beside them the same turn with one fdatasync'd append
 * per record, the floor of what a durable save costs on this disk, and that floor plus the
 * codec's CPU measured apart (a shared disk's fdatasync varies more than the codec costs).
 *
 *     npm run bench:seal -- [--turns N] [--rounds N] [--result-bytes N] [--syncs N]
 *
 * The target when the codec sits at the store's door: a turn with encryption at most 1.15x
 * the same turn without. The CPU-only ratio printed here is the part the codec adds; the
 * durable ratio is the one a run sees.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { endTurnReply, scriptedModel, toolUseReply } from '../src/model/scripted-model.ts';
import { startRun } from '../src/runtime/run-api.ts';
import { frameLine } from '../src/store/journal/framing.ts';
import type { JournalRecord } from '../src/store/journal/journal-record.ts';
import { MemoryStore } from '../src/store/memory-store.ts';
import { createRunKey } from '../src/seal/envelope.ts';
import { KeyRing } from '../src/seal/keys.ts';
import { openRecordContent, sealRecordContent } from '../src/seal/record-content.ts';
import { openerFor, sealerFor } from '../src/seal/value-codec.ts';
import { defineTool } from '../src/tools/tool.ts';
import { median } from './stats.ts';

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '9' },
    'result-bytes': { type: 'string', default: '2048' },
    syncs: { type: 'string', default: '200' },
  },
});
const TURNS = Number(values.turns);
const ROUNDS = Number(values.rounds);
const RESULT_BYTES = Number(values['result-bytes']);
const SYNCS = Number(values.syncs);

/** One turn of a real run: its records from the first MODEL_USAGE after turn 1 opened to its CLOSE_TURN. */
async function typicalTurn(): Promise<{ runId: string; records: JournalRecord[] }> {
  const page = 'Q3 sales notes: the North region closed 14 new accounts, revenue up 12%. '.repeat(Math.ceil(RESULT_BYTES / 72)).slice(0, RESULT_BYTES);
  const fetchPage = defineTool<{ page: number }>({
    name: 'fetch_page',
    description: 'Returns a page of notes.',
    inputSchema: { type: 'object', properties: { page: { type: 'integer' } }, required: ['page'] },
    readOnly: true,
    run: ({ page: n }) => `${n}: ${page}`,
  });
  const script = [1, 2, 3].map((t) => toolUseReply([{ id: `toolu_0${t}`, name: 'fetch_page', input: { page: t } }], `Reading page ${t} of the notes before I summarise them for the report.`));
  const store = new MemoryStore();
  await startRun({ store, model: scriptedModel([...script, endTurnReply('The report is written.')]), tools: [fetchPage], task: 'Summarise the Q3 sales notes into a report.', maxTurns: 5 });
  const loaded = await store.load();
  const records = loaded.records.map((stored) => stored.record);
  // Turn 2: from the usage of the reply that opens it to the record that closes it.
  const from = records.findIndex((record) => record.event === 'MODEL_REPLY' && record.turn === 2) - 1;
  const to = records.findIndex((record, i) => i > from && record.event === 'CLOSE_TURN');
  return { runId: loaded.header.runId, records: records.slice(from, to + 1) };
}

function jsonOf(line: Buffer): string {
  return line.toString('utf8', 9, line.length - 1);
}

async function main(): Promise<void> {
  const { runId, records } = await typicalTurn();
  const { runKey } = await createRunKey(KeyRing.of([{ id: 'k1', key: randomBytes(32) }]));
  const sealer = sealerFor(runKey, runId);
  const opener = openerFor(runKey, runId);
  let sink = 0;

  const cases = {
    encode: () => {
      for (const record of records) sink += frameLine(record).length;
    },
    'seal + encode': () => {
      for (const record of records) sink += frameLine(sealRecordContent(record, sealer)).length;
    },
  };
  const plainLines = records.map((record) => jsonOf(frameLine(record)));
  const sealedLines = records.map((record) => jsonOf(frameLine(sealRecordContent(record, sealer))));
  const reads = {
    decode: () => {
      for (const line of plainLines) sink += (JSON.parse(line) as JournalRecord).seq;
    },
    'decode + open': () => {
      for (const line of sealedLines) sink += openRecordContent(JSON.parse(line) as JournalRecord, opener).seq;
    },
  };
  const all: Record<string, () => void> = { ...cases, ...reads };
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(all).map((name) => [name, []]));
  for (const run of Object.values(all)) for (let t = 0; t < 200; t++) run();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, run] of Object.entries(all)) {
      const start = process.hrtime.bigint();
      for (let t = 0; t < TURNS; t++) run();
      samples[name]!.push(Number(process.hrtime.bigint() - start) / 1000 / TURNS);
    }
  }
  const us = (name: string) => median(samples[name]!);

  // The floor of a durable save: each record of the turn appended and fdatasynced, as a file
  // store's saves are; plain and sealed take turns in short rounds, so that a slow spell of a
  // shared disk falls on both alike.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'da-seal-cost-'));
  const durableRound = (fd: number, encode: (record: JournalRecord) => Buffer, turns: number) => {
    const start = process.hrtime.bigint();
    for (let t = 0; t < turns; t++) {
      for (const record of records) {
        fs.writeSync(fd, encode(record));
        fs.fdatasyncSync(fd);
      }
    }
    return Number(process.hrtime.bigint() - start) / 1000 / turns;
  };
  const plainFd = fs.openSync(path.join(dir, 'plain.jsonl'), 'a');
  const sealedFd = fs.openSync(path.join(dir, 'sealed.jsonl'), 'a');
  const durablePlain: number[] = [];
  const durableSealed: number[] = [];
  const syncRounds = Math.max(1, Math.round(SYNCS / 10));
  for (let round = 0; round < syncRounds; round++) {
    durablePlain.push(durableRound(plainFd, (record) => frameLine(record), 10));
    durableSealed.push(durableRound(sealedFd, (record) => frameLine(sealRecordContent(record, sealer)), 10));
  }
  fs.closeSync(plainFd);
  fs.closeSync(sealedFd);
  fs.rmSync(dir, { recursive: true, force: true });

  const plainBytes = plainLines.reduce((sum, line) => sum + line.length + 10, 0);
  const sealedBytes = sealedLines.reduce((sum, line) => sum + line.length + 10, 0);
  const row = (label: string, plain: number, sealed: number) =>
    `${label.padEnd(44)} ${plain.toFixed(1).padStart(9)} µs ${sealed.toFixed(1).padStart(9)} µs   ${(sealed / plain).toFixed(2)}x`;
  console.log(`durable-agent bench:seal: node ${process.version}, ${os.cpus().length} cores, ${process.platform}; load average ${os.loadavg()[0]!.toFixed(1)} at the end`);
  console.log(`A turn of ${records.length} records (${records.map((r) => r.event).join(', ')}), a ${RESULT_BYTES}-byte tool result; medians of ${ROUNDS} rounds of ${TURNS} turns`);
  console.log(`${''.padEnd(44)} ${'plain'.padStart(12)} ${'sealed'.padStart(12)}   ratio`);
  console.log(row('write: encode (JSON + CRC)', us('encode'), us('seal + encode')));
  console.log(row('read: parse', us('decode'), us('decode + open')));
  console.log(row('both ways', us('encode') + us('decode'), us('seal + encode') + us('decode + open')));
  console.log(row(`write + fdatasync per record (${SYNCS} turns)`, median(durablePlain), median(durableSealed)));
  // A shared disk's fdatasync varies more from round to round than the codec costs: the durable
  // turn plus the codec's CPU both ways, measured apart, is the steadier figure.
  const codecUs = us('seal + encode') + us('decode + open') - us('encode') - us('decode');
  console.log(row('durable write + the codec both ways', median(durablePlain), median(durablePlain) + codecUs));
  console.log(`${'bytes per turn'.padEnd(44)} ${String(plainBytes).padStart(9)}    ${String(sealedBytes).padStart(9)}      ${(sealedBytes / plainBytes).toFixed(2)}x`);
  if (sink === 0) console.log('');
}

await main();
