/**
 * npm run bench:subagent: what a sub-agent call costs its parent's journal. The same parent (one
 * reply calling a tool N times, then its answer) run twice on the file store, with fsync: once
 * calling a plain tool, once calling a sub-agent (each call a child run of its own, writing one
 * note). Counted in the parent's run folder only (the children's folders are theirs): the
 * records of its journal, and the fsync and fdatasync calls on its files, by wrapping node:fs as
 * bench/io-counter.ts does. Target: a sub-agent call adds at most 3 records and 2 fsyncs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineAgent, defineTool, FileRuns, startRun, subagentTool, type ToolDefinition } from '../src/index.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../src/testing.ts';

const MAX_RECORDS_PER_CALL = 3;
const MAX_FSYNCS_PER_CALL = 2;
const REPEATS = 5;

/** fsync and fdatasync calls by the path of the file (or directory) synced. */
const syncsByPath = new Map<string, number>();
const pathOfFd = new Map<number, string>();

function countSyncsByPath(): void {
  const openSync = fs.openSync as (...args: unknown[]) => number;
  fs.openSync = ((...args: unknown[]) => {
    const fd = openSync.apply(fs, args);
    pathOfFd.set(fd, path.resolve(String(args[0])));
    return fd;
  }) as typeof fs.openSync;
  const count = (fd: number) => {
    const file = pathOfFd.get(fd) ?? '?';
    syncsByPath.set(file, (syncsByPath.get(file) ?? 0) + 1);
  };
  for (const name of ['fsyncSync', 'fdatasyncSync'] as const) {
    const sync = fs[name];
    fs[name] = (fd: number) => {
      count(fd);
      sync.call(fs, fd);
    };
  }
  for (const name of ['fsync', 'fdatasync'] as const) {
    const sync = fs[name];
    fs[name] = ((fd: number, callback: fs.NoParamCallback) => {
      count(fd);
      sync.call(fs, fd, callback);
    }) as typeof fs.fdatasync;
  }
}

/** The syncs of files in `dir` (and of `dir` itself) since the counts were cleared. */
function syncsIn(dir: string): number {
  let syncs = 0;
  for (const [file, count] of syncsByPath) if (file === dir || path.dirname(file) === dir) syncs += count;
  return syncs;
}

function writerAgent(dir: string) {
  const writeNote = defineTool<{ text: string }>({
    name: 'write_note',
    description: 'Write a note.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    readOnly: false,
    idempotent: true,
    run: ({ text }, ctx) => {
      fs.writeFileSync(path.join(dir, ctx.idempotencyKey), text);
      return 'written';
    },
  });
  return defineAgent({
    name: 'writer',
    model: scriptedModel([toolUseReply([{ id: 'toolu_w', name: 'write_note', input: { text: 'a note' } }]), endTurnReply('wrote it')], { name: 'scripted-writer' }),
    tools: [writeNote],
  });
}

/** The plain tool of the same name and input: it writes the note itself. */
function plainWriter(dir: string): ToolDefinition<{ task: string }> {
  return {
    name: 'writer',
    description: 'Write a note.',
    inputSchema: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'] },
    readOnly: false,
    idempotent: true,
    concurrencySafe: true,
    run: ({ task }, ctx) => {
      fs.writeFileSync(path.join(dir, ctx.idempotencyKey), task);
      return 'wrote it';
    },
  };
}

function editor(tool: ToolDefinition, calls: number) {
  const uses = Array.from({ length: calls }, (_, at) => ({ id: `toolu_${at}`, name: 'writer', input: { task: `note ${at}` } }));
  return defineAgent({ name: 'editor', model: scriptedModel([toolUseReply(uses), endTurnReply('done')], { name: 'scripted-editor' }), tools: [tool] });
}

interface Figures {
  records: number;
  syncs: number;
  ms: number;
}

async function measure(kind: 'plain' | 'subagent', calls: number, root: string): Promise<Figures> {
  const dir = fs.mkdtempSync(path.join(root, `${kind}-`));
  const runs = new FileRuns(path.join(dir, '.durable-agent'));
  const store = runs.store('parent');
  const tool = kind === 'plain' ? plainWriter(dir) : subagentTool(writerAgent(dir));
  syncsByPath.clear();
  const started = performance.now();
  const result = await startRun({ agent: editor(tool, calls), store, runId: 'parent', task: 'Write notes.' });
  const ms = performance.now() - started;
  if (result.status !== 'done') throw new Error(`the ${kind} parent ended ${result.status}`);
  const records = (await store.load()).records.length;
  return { records, syncs: syncsIn(store.dir), ms };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

countSyncsByPath();
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-bench-subagent-'));
try {
  console.log(`node ${process.version}, ${os.cpus().length} cores; the file store with fsync; median of ${REPEATS} runs (records and fsyncs are the same every run)`);
  console.log('calls  tool      parent records  parent fsyncs  ms (whole run)');
  const met: boolean[] = [];
  for (const calls of [1, 2, 4]) {
    const figures: Record<'plain' | 'subagent', Figures> = { plain: { records: 0, syncs: 0, ms: 0 }, subagent: { records: 0, syncs: 0, ms: 0 } };
    for (const kind of ['plain', 'subagent'] as const) {
      const trials: Figures[] = [];
      for (let at = 0; at < REPEATS; at++) trials.push(await measure(kind, calls, root));
      figures[kind] = { records: median(trials.map((t) => t.records)), syncs: median(trials.map((t) => t.syncs)), ms: median(trials.map((t) => t.ms)) };
      console.log(`${String(calls).padEnd(5)}  ${kind.padEnd(8)}  ${String(figures[kind].records).padEnd(14)}  ${String(figures[kind].syncs).padEnd(13)}  ${figures[kind].ms.toFixed(1)}`);
    }
    const records = (figures.subagent.records - figures.plain.records) / calls;
    const syncs = (figures.subagent.syncs - figures.plain.syncs) / calls;
    const ok = figures.subagent.records - figures.plain.records <= MAX_RECORDS_PER_CALL * calls && figures.subagent.syncs - figures.plain.syncs <= MAX_FSYNCS_PER_CALL * calls;
    met.push(ok);
    console.log(`       a sub-agent call adds ${records.toFixed(2)} records and ${syncs.toFixed(2)} fsyncs to its parent's journal beyond a plain call (target: ≤ ${MAX_RECORDS_PER_CALL} records, ≤ ${MAX_FSYNCS_PER_CALL} fsyncs) ${ok ? 'met' : 'MISSED'}`);
  }
  console.log(
    "Why: a sub-agent call is recorded as any call is (its outcome, one record, fsynced with its turn's others); the children's spending is one MODEL_USAGE record per turn, written in the same unit as the turn's close (no fsync of its own).",
  );
  if (met.includes(false)) process.exitCode = 1;
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
