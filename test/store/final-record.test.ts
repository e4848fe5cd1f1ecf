/**
 * A finished run answers from its final record: the record that leaves a run in a final state
 * carries its state without the messages (a final mark), and a resume that takes the run no
 * further reads that record alone, from the end of the journal, in time that does not grow with
 * the run. Shown by counting what is read (the bytes the reader asks for, the records a load
 * returns), never by timing. A resume that goes on loads the run whole; journals written before
 * the mark load and resume as they always did; damage in the part read is refused or recovered
 * exactly as a load from the last snapshot does.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchScript, fetchPage } from '../../bench/workload.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { endTurnReply, scriptedModel, type ScriptedStep, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { runResultOf } from '../../src/runtime/run-result.ts';
import { StoreCorruptError } from '../../src/store/errors.ts';
import { FileStore, JOURNAL_FILE } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { type JournalBytes, readJournal } from '../../src/store/journal/journal-reader.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import type { LoadedRun, LoadOptions, RunStore } from '../../src/store/store.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures', 'journals-before-final-mark');
const LONG = 300;

function stateDir(dir: string): string {
  return path.join(dir, '.durable-agent');
}

/** The store, with every load's options and the records it returned written down. */
function watched<S extends RunStore>(store: S): { store: S; loads: { options: LoadOptions; records: number; first: LoadedRun['records'][number] }[] } {
  const loads: { options: LoadOptions; records: number; first: LoadedRun['records'][number] }[] = [];
  const proxy = new Proxy(store, {
    get(target, property) {
      if (property === 'load') {
        return async (options: LoadOptions = {}) => {
          const loaded = await target.load(options);
          loads.push({ options, records: loaded.records.length, first: loaded.records[0]! });
          return loaded;
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: proxy, loads };
}

/** The store as it was before final records: the option is dropped, so every load reads from the last snapshot. */
function withoutFinalRecord<S extends RunStore>(store: S): S {
  return new Proxy(store, {
    get(target, property) {
      if (property === 'load') return (options: LoadOptions = {}) => target.load({ ...options, finalRecord: false });
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** The journal's bytes, with the count of bytes the reader asked for. */
function counted(buffer: Buffer): { bytes: JournalBytes; read: { bytes: number } } {
  const read = { bytes: 0 };
  return {
    read,
    bytes: {
      length: buffer.length,
      read: (start, length) => {
        const piece = Buffer.from(buffer.subarray(start, start + length));
        read.bytes += piece.length;
        return piece;
      },
    },
  };
}

async function finishedLongRun(): Promise<{ dir: string; journal: string; result: Awaited<ReturnType<typeof startRun>> }> {
  const dir = tempDir();
  const store = new FileStore(stateDir(dir));
  const script = benchScript(LONG);
  const result = await startRun({ store, model: scriptedModel(script), tools: [fetchPage], task: 'read the pages', maxTurns: LONG });
  store.close();
  return { dir, journal: path.join(stateDir(dir), JOURNAL_FILE), result };
}

function outcome(read: () => unknown): unknown {
  try {
    return read();
  } catch (error) {
    return `refused: ${(error as Error).name}: ${(error as Error).message}`;
  }
}

const unasked = { name: 'unasked', createMessage: async () => Promise.reject(new Error('a finished run asked its model on resume')) };

describe('a finished long run', () => {
  it('is read from its final record alone: a few kilobytes from the end of a journal of hundreds', async () => {
    const { journal } = await finishedLongRun();
    const buffer = fs.readFileSync(journal);
    expect(buffer.length).toBeGreaterThan(500_000);
    const { bytes, read } = counted(buffer);
    const tail = readJournal(journal, bytes, { fromLastSnapshot: true, finalRecord: true });
    expect(tail.records).toHaveLength(1);
    expect(tail.records[0]!.record).toMatchObject({ seq: tail.mark.records - 1, state: 'done' });
    expect(tail.records[0]!.record.final).toBeDefined();
    // The header and mark, then the last piece from the end (the final record and the line before it).
    expect(read.bytes).toBeLessThan(64 * 1024);
    expect(tail.goodLength).toBe(buffer.length);
    expect(tail.cutEnd).toBeNull();
  }, 120_000);

  it('answers a resume from that record with the result and events a resume of the whole journal gives, and writes nothing', async () => {
    const { dir, journal, result } = await finishedLongRun();
    const before = fs.readFileSync(journal);
    const answer = async (store: RunStore) => {
      const events: RunEvent[] = [];
      const resumed = await resumeRun({ store, model: unasked, tools: [fetchPage], observer: (event) => events.push(event) });
      return { resumed, events: events.filter((event) => event.type === 'resumed' || event.type === 'finished') };
    };
    const fromFinal = watched(new FileStore(stateDir(dir)));
    const quick = await answer(fromFinal.store);
    expect(fromFinal.loads.map((load) => load.records)).toEqual([1]);
    expect(fromFinal.loads[0]!.first.record.seq).toBe(4 * LONG + 2);

    const whole = watched(withoutFinalRecord(new FileStore(stateDir(dir))));
    const slow = await answer(whole.store);
    expect(whole.loads.map((load) => load.records)).toEqual([4 * LONG + 3]);

    expect(quick.resumed).toEqual(result);
    expect(quick).toEqual(slow);
    expect(quick.events.find((event) => event.type === 'resumed')).toMatchObject({ ledgerEntries: LONG, turn: LONG, usage: result.usage });
    expect(fs.readFileSync(journal).equals(before)).toBe(true);
  }, 120_000);
});

describe('a final mark', () => {
  /** Runs ending in each final state a run reaches by itself or by a cancel. */
  const endings: [string, (store: RunStore) => Promise<unknown>][] = [
    ['done', (store) => startRun({ store, model: scriptedModel(script(3)), tools: countingTools().tools, task: 't' })],
    ['stoppedAtMaxTurns', (store) => startRun({ store, model: scriptedModel(script(4)), tools: countingTools().tools, task: 't', maxTurns: 2 })],
    ['failed', (store) => startRun({ store, model: scriptedModel([...script(2).slice(0, 2), { stop_reason: 'refusal', content: [] } as unknown as ScriptedStep]), tools: countingTools().tools, task: 't' })],
  ];

  it.each(endings)('%s: folds alone into the state a fold of every record gives, but the messages', async (state, run) => {
    const store = new MemoryStore();
    await run(store).catch(() => {});
    const whole = foldJournal(store.location, await store.load());
    const loaded = await store.load({ fromLastSnapshot: true, finalRecord: true });
    expect(loaded.records).toHaveLength(1);
    const alone = foldJournal(store.location, loaded);
    expect(alone.state).toBe(state);
    expect(alone.fromFinalRecord).toEqual({ ledgerEntries: whole.ledger.size });
    expect(withoutAbsent({ ...alone.context, messages: whole.context.messages })).toEqual(withoutAbsent(whole.context));
    expect(runResultOf('r', alone.state, alone.context)).toEqual(runResultOf('r', whole.state, whole.context));
  });

  it('is left off a record written without waiting for the disk, and off every record of a live state', async () => {
    const store = new MemoryStore();
    await startRun({ store, model: scriptedModel(script(3)), tools: countingTools().tools, task: 't' });
    const { records } = await store.load();
    const marked = records.filter((stored) => stored.record.final);
    expect(marked.map((stored) => stored.record.seq)).toEqual([records.length - 1]);
  });
});

/** The context with the fields a run may leave out while it has none (null or absent alike) left out. */
function withoutAbsent(context: object): object {
  return Object.fromEntries(Object.entries(context).filter(([, value]) => value !== undefined && value !== null));
}

/** `turns` turns of one lookup each, then an answer. */
function script(turns: number): ScriptedStep[] {
  const steps: ScriptedStep[] = [];
  for (let turn = 1; turn <= turns; turn++) steps.push(toolUseReply([{ id: `t${turn}`, name: 'lookup', input: { q: `q${turn}` } }], `turn ${turn}`));
  steps.push(endTurnReply('all done'));
  return steps;
}

describe('a run that goes on', () => {
  it('is loaded whole once its final record shows that the resume reopens it (more turns), and goes on as if never stopped', async () => {
    const dir = tempDir();
    const tools = countingTools();
    const first = new FileStore(stateDir(dir));
    const stopped = await startRun({ store: first, model: scriptedModel(script(4)), tools: tools.tools, task: 't', maxTurns: 2 });
    first.close();
    expect(stopped.status).toBe('stoppedAtMaxTurns');
    const { store, loads } = watched(new FileStore(stateDir(dir)));
    const resumed = await resumeRun({ store, model: scriptedModel(script(4)), tools: tools.tools, maxTurns: 4 });
    expect(resumed).toMatchObject({ status: 'done', turn: 4, text: 'all done' });
    expect(loads.map((load) => load.records)).toEqual([1, expect.any(Number)]);
    expect(loads[1]!.records).toBeGreaterThan(1);
    expect(loads[1]!.options.finalRecord).toBeUndefined();
    expect([1, 2, 3, 4].map((n) => tools.counter.of(`t${n}`))).toEqual([1, 1, 1, 1]);
  });

  it('with the user\'s next message is loaded whole from the start', async () => {
    const store = new MemoryStore();
    await startRun({ store, model: scriptedModel(script(1)), tools: countingTools().tools, task: 't', maxTurns: 5 });
    const { store: seen, loads } = watched(store);
    const next = await resumeRun({ store: seen, model: scriptedModel([...script(1), endTurnReply('and more')]), tools: countingTools().tools, message: 'anything else?' });
    expect(next).toMatchObject({ status: 'done', text: 'and more' });
    expect(loads.every((load) => !load.options.finalRecord)).toBe(true);
  });
});

describe('a long run killed before its end', () => {
  it('resumes from its last snapshot, folding only the records after it', async () => {
    const dir = tempDir();
    const every = 40;
    const first = new FileStore(stateDir(dir));
    const crashed = await startRun({
      store: first, model: scriptedModel(benchScript(LONG)), tools: [fetchPage], task: 'read the pages', maxTurns: LONG, snapshotEvery: every, crashAfter: `after-effect-write:${LONG - 10}`,
    }).catch((error: unknown) => error);
    first.close();
    expect(crashed).toBeInstanceOf(SimulatedCrash);
    const { store, loads } = watched(new FileStore(stateDir(dir)));
    const resumed = await resumeRun({ store, model: scriptedModel(benchScript(LONG)), tools: [fetchPage], snapshotEvery: every });
    expect(resumed).toMatchObject({ status: 'done', turn: LONG });
    expect(loads[0]!.first.record.snapshot).toBeDefined();
    expect(loads[0]!.records).toBeLessThanOrEqual(every + 1);
  }, 120_000);
});

describe('journals written before the final mark', () => {
  function fixture(name: string): { dir: string; journal: string } {
    const dir = tempDir();
    fs.mkdirSync(stateDir(dir), { recursive: true });
    const journal = path.join(stateDir(dir), JOURNAL_FILE);
    fs.copyFileSync(path.join(FIXTURES, `${name}.jsonl`), journal);
    return { dir, journal };
  }

  it('a finished one answers from the whole journal, as before, and is left as it was', async () => {
    const { dir, journal } = fixture('finished');
    const before = fs.readFileSync(journal);
    const { store, loads } = watched(new FileStore(stateDir(dir)));
    const result = await resumeRun({ store, model: unasked, tools: [fetchPage] });
    expect(result).toMatchObject({ status: 'done', turn: 4, text: 'Read all 4 pages; the notes are summarised.' });
    expect(loads.map((load) => load.records)).toEqual([19]);
    expect(fs.readFileSync(journal).equals(before)).toBe(true);
  });

  it('a killed one resumes to its end, which then carries the mark a later resume answers from', async () => {
    const { dir } = fixture('killed');
    const resumed = await resumeRun({ store: new FileStore(stateDir(dir)), model: scriptedModel(benchScript(4)), tools: [fetchPage] });
    expect(resumed).toMatchObject({ status: 'done', turn: 4 });
    const { store, loads } = watched(new FileStore(stateDir(dir)));
    expect(await resumeRun({ store, model: unasked, tools: [fetchPage] })).toEqual(resumed);
    expect(loads.map((load) => load.records)).toEqual([1]);
  });
});

describe('damage', () => {
  async function finishedJournal(): Promise<{ journal: string; bytes: Buffer }> {
    const dir = tempDir();
    const store = new FileStore(stateDir(dir));
    await startRun({ store, model: scriptedModel(script(4)), tools: countingTools().tools, task: 't' });
    store.close();
    const journal = path.join(stateDir(dir), JOURNAL_FILE);
    return { journal, bytes: fs.readFileSync(journal) };
  }

  /** Where each line of the journal starts. */
  function lineStarts(bytes: Buffer): number[] {
    const starts = [0];
    for (let at = bytes.indexOf(0x0a); at !== -1 && at < bytes.length - 1; at = bytes.indexOf(0x0a, at + 1)) starts.push(at + 1);
    return starts;
  }

  function flipped(bytes: Buffer, at: number): Buffer {
    const copy = Buffer.from(bytes);
    copy[at] = copy[at] === 0x61 ? 0x62 : 0x61;
    return copy;
  }

  const damages: [string, (bytes: Buffer) => Buffer][] = [
    ['a torn record after the final one', (bytes) => Buffer.concat([bytes, Buffer.from('0badf00d {"seq":99,"at":1,"state":"awaiting')])],
    ['a whole record after the final one that the mark does not count', (bytes) => {
      const starts = lineStarts(bytes);
      return Buffer.concat([bytes, bytes.subarray(starts[starts.length - 1]!)]);
    }],
    ['the final record damaged', (bytes) => flipped(bytes, bytes.length - 20)],
    ['the line before the final record damaged', (bytes) => {
      const starts = lineStarts(bytes);
      return flipped(bytes, starts[starts.length - 1]! - 20);
    }],
    ['the file cut inside the final record', (bytes) => bytes.subarray(0, bytes.length - 30)],
    ['the final record cut off whole', (bytes) => {
      const starts = lineStarts(bytes);
      return bytes.subarray(0, starts[starts.length - 1]!);
    }],
    ['a header of another format', (bytes) => Buffer.concat([Buffer.from(bytes.toString('latin1').replace('durable-agent/journal', 'durable-agent/journax'), 'latin1')])],
    ['the commit mark damaged', (bytes) => {
      const mark = bytes.indexOf('@commit');
      return flipped(bytes, mark + 12);
    }],
  ];

  it.each(damages)('%s: read from the final record, refused or recovered exactly as a load from the last snapshot', async (_, damage) => {
    const { journal, bytes } = await finishedJournal();
    const damaged = damage(bytes);
    for (const acceptLostRecord of [false, true]) {
      const final = outcome(() => readJournal(journal, damaged, { fromLastSnapshot: true, finalRecord: true, acceptLostRecord }));
      const snapshot = outcome(() => readJournal(journal, damaged, { fromLastSnapshot: true, acceptLostRecord }));
      expect(final).toEqual(snapshot);
    }
  });

  it('a resume refuses a damaged final record with the error a whole load gives, and recovers a torn tail after it', async () => {
    const { journal, bytes } = await finishedJournal();
    const dir = path.dirname(path.dirname(journal));
    fs.writeFileSync(journal, flipped(bytes, bytes.length - 20));
    const refused = await resumeRun({ store: new FileStore(stateDir(dir)), model: unasked, tools: countingTools().tools }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreCorruptError);
    expect(refused).toMatchObject({ damage: 'last' });

    fs.writeFileSync(journal, Buffer.concat([bytes, Buffer.from('0badf00d {"seq":99,"at":1,"state":"awai')]));
    const events: RunEvent[] = [];
    const recovered = await resumeRun({ store: new FileStore(stateDir(dir)), model: unasked, tools: countingTools().tools, observer: (event) => events.push(event) });
    expect(recovered).toMatchObject({ status: 'done', turn: 4 });
    expect(events.find((event) => event.type === 'resumed')).toMatchObject({ tornTail: { offset: bytes.length, lostCommittedRecord: null } });
  });

  it('damage before the final record\'s line is not read by a resume that only answers; one that goes on refuses it as before', async () => {
    const { journal, bytes } = await finishedJournal();
    const dir = path.dirname(path.dirname(journal));
    const starts = lineStarts(bytes);
    fs.writeFileSync(journal, flipped(bytes, starts[4]! + 20));
    expect(await resumeRun({ store: new FileStore(stateDir(dir)), model: unasked, tools: countingTools().tools })).toMatchObject({ status: 'done' });
    const goesOn = await resumeRun({ store: new FileStore(stateDir(dir)), model: scriptedModel([...script(4), endTurnReply('more')]), tools: countingTools().tools, message: 'and?' }).catch((error: unknown) => error);
    expect(goesOn).toBeInstanceOf(StoreCorruptError);
    expect(goesOn).toMatchObject({ damage: 'inside' });
  });
});
