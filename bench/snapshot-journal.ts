/**
 * Long runs whose live context stays bounded, to measure what snapshot records own: the cost of
 * a turn, the memory of the writing process and the time of a resume, at T = 1,000 to 100,000.
 *
 *   snapshot-journal.ts write <dir> <turns> <snapshots|plain>
 *
 * The journal is written by the real codec, the real snapshot policy and the real FileStore
 * (fsync and fdatasync made no-ops: see withoutSyncs), the transitions computed by the real
 * machine's pure transition(). Every COMPACT_EVERY turns the conversation is cut back to the
 * task and the last turn, as a compaction would (the compaction itself is another helper's): a
 * record that shrinks the conversation, hence a snapshot. 'plain' writes the same run as today's
 * runtime would, with no snapshot record, so a resume has to read and fold it all.
 *
 * Prints one JSON line: per-turn time and bytes over the last WINDOW turns, peak RSS.
 * The run is left killed right after the ledger entry of its last turn (as resume-journal.ts).
 */
import { performance } from 'node:perf_hooks';
import { transition } from 'xstate';
import { agentLoopMachine } from '../machines/agent-loop.machine.ts';
import { addUsage } from '../machines/agent-loop.logic.ts';
import { type AgentContext, type AgentEvent, type Message, ZERO_USAGE } from '../machines/agent-loop.types.ts';
import { toolUseReply } from '../src/model/scripted-model.ts';
import { SimulatedCrash } from '../src/runtime/crash-points.ts';
import { startRun } from '../src/runtime/run-api.ts';
import { SnapshotPolicy } from '../src/runtime/snapshot-policy.ts';

/** A count besides the cuts (this input's context is cut back every 50 turns, as a compaction would). */
const SNAPSHOTS_EVERY = 1000;
import { FileStore } from '../src/store/file-store.ts';
import { foldJournal } from '../src/store/journal/fold-journal.ts';
import { type DurableView, encodeRecord, ledgerEntriesOf, type TransitionToEncode } from '../src/store/journal/journal-codec.ts';
import type { JournalRecord, RecordEvent } from '../src/store/journal/journal-record.ts';
import type { AppendOptions } from '../src/store/store.ts';
import { withoutSyncs } from './io-counter.ts';
import { resumeStoreDir } from './resume-journal.ts';
import { benchRunOptions, benchScript, pageText } from './workload.ts';

/** Turns between two compactions: the live context holds at most this many turns. */
export const COMPACT_EVERY = 50;
/** Per-turn figures are taken over the last this many turns of each run. */
export const WINDOW = 1000;

export interface WriteMeasure {
  turns: number;
  mode: 'snapshots' | 'plain';
  /** Milliseconds per turn over the last WINDOW turns (encode + append, fsync off). */
  msPerTurn: number;
  bytesPerTurn: number;
  peakRssKb: number;
  journalBytes: number;
  snapshots: number;
}

/** Today's runtime: every record a delta, the whole ledger kept. */
class NoSnapshots extends SnapshotPolicy {
  override encode(prev: DurableView, next: TransitionToEncode): JournalRecord {
    return encodeRecord(prev, next);
  }
  override durableAfter(record: JournalRecord, durable: DurableView, state: DurableView['state'], context: DurableView['context']): DurableView {
    for (const entry of ledgerEntriesOf(record)) durable.ledger.set(entry.tool_use_id, entry);
    return { state, context, ledger: durable.ledger };
  }
}

async function write(dir: string, turns: number, mode: WriteMeasure['mode']): Promise<WriteMeasure> {
  const store = new FileStore(resumeStoreDir(dir));
  // The first turn by the real runtime: header, origin, and records 0.. exactly as a run writes them.
  await withoutSyncs(() => startRun({ ...benchRunOptions(store, benchScript(1)), maxTurns: turns + 1, crashAfter: 'after-save-b:1' })).catch((error) => {
    if (!(error instanceof SimulatedCrash)) throw error;
  });
  store.close();
  const loaded = await store.load({ repair: true });
  const folded = foldJournal(store.location, loaded);
  const first = loaded.records[0]!.record;
  let last = loaded.records[loaded.records.length - 1]!.record;
  const policy = mode === 'snapshots' ? new SnapshotPolicy(SNAPSHOTS_EVERY, first, last) : new NoSnapshots(0, first, last);
  let snapshot = agentLoopMachine.resolveState({ value: folded.state, context: folded.context });
  let durable: DurableView = folded;
  let seq = last.seq + 1;
  let windowBytes = 0;
  let windowStart = 0;
  let snapshots = 0;

  const persist = async (event: RecordEvent, context: AgentContext, options?: AppendOptions) => {
    const state = snapshot.value as DurableView['state'];
    const record = policy.encode(durable, { seq, at: Date.now(), event, state, context }, options);
    const receipt = await store.append(record, options);
    durable = policy.durableAfter(record, durable, state, context);
    if (record.snapshot) snapshots++;
    last = record;
    seq++;
    return receipt.bytes;
  };
  const step = async (event: AgentEvent) => {
    const [next] = transition(agentLoopMachine, snapshot, event);
    snapshot = next;
    return persist(event.type as RecordEvent, next.context);
  };

  await withoutSyncs(async () => {
    for (let turn = 2; turn <= turns; turn++) {
      if (turn === turns - WINDOW + 1 || (turns <= WINDOW && turn === 2)) {
        windowStart = performance.now();
        windowBytes = 0;
      }
      let bytes = 0;
      const usage = { input: 1000, output: 20, cacheRead: 0, cacheWrite: 0 };
      const ctx = snapshot.context;
      snapshot = agentLoopMachine.resolveState({ value: snapshot.value, context: { ...ctx, usage: addUsage(ctx.usage, usage) } });
      bytes += await persist('MODEL_USAGE', snapshot.context, { sync: false });
      const reply = { ...toolUseReply([{ id: `toolu_bench_${turn}`, name: 'fetch_page', input: { page: turn } }], `Reading page ${turn}.`), usage: ZERO_USAGE };
      bytes += await step({ type: 'MODEL_REPLY', reply });
      bytes += await step({ type: 'TOOL_RESULT', outcome: { tool_use_id: `toolu_bench_${turn}`, name: 'fetch_page', kind: 'ran', content: pageText(turn), is_error: false } });
      if (turn === turns) break; // killed right after the last ledger entry
      const [closed] = transition(agentLoopMachine, snapshot, { type: 'CLOSE_TURN' });
      snapshot = turn % COMPACT_EVERY === 0 ? agentLoopMachine.resolveState({ value: closed.value, context: { ...closed.context, messages: compacted(closed.context.messages, turn) } }) : closed;
      bytes += await persist('CLOSE_TURN', snapshot.context);
      windowBytes += bytes;
    }
  });
  const windowTurns = Math.min(WINDOW, turns - 1);
  const msPerTurn = (performance.now() - windowStart) / windowTurns;
  store.close();
  const { size } = await import('node:fs').then((fs) => fs.statSync(store.journalPath));
  return { turns, mode, msPerTurn, bytesPerTurn: windowBytes / windowTurns, peakRssKb: process.resourceUsage().maxRSS, journalBytes: size, snapshots };
}

/** What a compaction leaves: the task with a summary of the turns before, and the last turn. */
function compacted(messages: Message[], turn: number): Message[] {
  const task = messages[0]!;
  const text = typeof task.content === 'string' ? task.content : '';
  return [{ role: 'user', content: `${text.split('\n\n[summary')[0]}\n\n[summary of turns 1 to ${turn - 1}: pages read, notes taken]` }, ...messages.slice(-2)];
}

async function main(): Promise<void> {
  const [command, dir, turns, mode] = process.argv.slice(2);
  if (command !== 'write' || !dir || !turns || (mode !== 'snapshots' && mode !== 'plain')) throw new Error('usage: snapshot-journal.ts write <dir> <turns> <snapshots|plain>');
  process.stdout.write(`${JSON.stringify(await write(dir, Number(turns), mode))}\n`);
}

await main();
