/**
 * One run as its page shows it: where it stands, its conversation, its timeline (each record,
 * each process that drove it, where one stopped and how the next settled the calls it found
 * open) and what waits for a person. Read without a lock, like status and history. A damaged
 * journal is shown as far as it can be read, read-only, with the damage in words.
 */
import fs from 'node:fs';
import { totalTokens } from '../../machines/agent-loop.logic.ts';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import type { PendingDecision } from '../awaits/pending-decisions.ts';
import { waitPlanOf } from '../awaits/wait-tool.ts';
import { waitsForWords } from '../awaits/wait-words.ts';
import { estimateCost } from '../model/prices.ts';
import { readRunStatus, type RunStatus } from '../runtime/run-status.ts';
import { transcriptOf, type TranscriptEntry } from '../runtime/run-transcript.ts';
import { withoutSealed } from '../words/block-words.ts';
import { StoreCorruptError } from '../store/errors.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import { readJournal } from '../store/journal/journal-reader.ts';
import { openStore } from '../store/open-store.ts';
import { type FolderRunStore, keptInFolder, type LoadedRun } from '../store/store.ts';
import { layoutDiagram } from '../../visualizer/diagram-layout.ts';
import { diagramSvg } from '../../visualizer/diagram-svg.ts';
import { machineGraphOf } from '../../visualizer/machine-graph.ts';
import { runViewOf } from '../../visualizer/run-timeline.ts';
import type { ProcessView, StepView } from '../../visualizer/viz-data.ts';
import { readablePrefix } from './readable-prefix.ts';
import { readForkNotes } from '../fork/fork-notes.ts';
import { type ConsoleRun, keyOf } from './run-sources.ts';
import { FLEET_KEY, KEY_SEPARATOR } from './console-row.ts';
import { type ChildRun, childRunsOf, runsFolderOf } from '../runtime/run-tree.ts';
import { type TreePendingDecision, treePendingDecisions } from '../runtime/tree-decisions.ts';
import { environmentKeys } from '../seal/environment-keys.ts';
import type { KeysGiven } from '../seal/keys.ts';
import { isSealedValue } from '../seal/value-codec.ts';

export interface RunSummary {
  runId: string;
  state: string;
  task: string;
  turn: number;
  maxTurns: number;
  tokens: number;
  costUsd: number | null;
  finalText: string | null;
  failure: string | null;
  /** The last record's number: the live stream goes on after it. */
  lastSeq: number;
  lastSaveAt: number;
}

/** A step of the timeline: what `history` prints of a record, with the diagram's arrow and the resume's decisions. */
export type TimelineStep = Pick<StepView, 'seq' | 'at' | 'point' | 'state' | 'event' | 'turn' | 'bytes' | 'tools' | 'edge' | 'process' | 'reconcile' | 'reused' | 'waiting'> & {
  decided: string[];
};

export interface RunDetail {
  key: string;
  source: ConsoleRun['source'];
  location: string;
  /** Why nothing may be decided or controlled here (archived, damaged); null: the run takes decisions and controls. */
  readOnly: string | null;
  /** The damage of the journal in words; the rest shows its readable prefix. */
  damage: string | null;
  summary: RunSummary | null;
  /** What status prints (live runs whose journal reads whole). */
  status: RunStatus | null;
  transcript: TranscriptEntry[];
  steps: TimelineStep[];
  processes: ProcessView[];
  /** The ledger: each call's recorded outcome, its content cut to a few lines' worth. */
  ledger: LedgerRow[];
  /** Where the run came from (a fork's parent, the run whose sub-agent call started it), the runs forked from it and the runs its sub-agent calls started. */
  lineage: Lineage;
  pending: PendingCall[];
  /**
   * The run is sealed and the console was not given its key: what stays readable shows (state,
   * turn, tools, usage, the timeline), each sealed text as "(sealed)", and this says what it
   * needs. Null when its content shows (a plain run, or a sealed one opened with the key).
   */
  sealed: SealedContent | null;
}

/** What a sealed run's content needs that the console was not given. */
export interface SealedContent {
  /** The master key it needs (KeyNotGivenError), or its run key, deleted (RunKeyMissingError); null when not known (an archived run). */
  keyId: string | null;
  /** In words, for the page: which key, and how to give it to the console. */
  message: string;
}

/** A call that waits, with what it waits for in words (approval, an answer, a wait's time or event). */
export interface PendingCall extends PendingDecision {
  /** The sub-agent run under this one that waits on the call (a decision given here goes to it); absent for the run's own. */
  run?: string | undefined;
  waitsFor: string;
  /** A wait's event, which a signal sends; null for a wait for a time only, and for approvals and questions. */
  event: string | null;
}

export interface Lineage {
  forkedFrom: { runId: string; seq: number; location: string } | null;
  forks: Array<{ seq: number; runId: string; location: string }>;
  /** The run whose sub-agent call started this one; `key` is its page's, null when the console does not show it. */
  calledBy: { runId: string; toolUseId: string; key: string | null } | null;
  /** The runs this one's sub-agent calls started, and theirs. */
  children: ChildRow[];
}

/** A sub-agent run under the run, as its page lists it. */
export interface ChildRow {
  runId: string;
  toolUseId: string;
  /** Its page's key in the console. */
  key: string | null;
  state: string;
  turn: number;
  tokens: number;
  costUsd: number | null;
  children: ChildRow[];
}

export interface LedgerRow {
  toolUseId: string;
  name: string;
  kind: string;
  isError: boolean;
  content: string;
  /** The record that wrote it. */
  seq: number;
}

/** A ledger entry's content is shown this long at most: the transcript has the result whole. */
const LEDGER_TEXT = 300;

const graph = machineGraphOf(agentLoopMachine);
let diagram: Promise<string> | null = null;

/** The machine as SVG, laid out once for the console's life (the layout is what takes time). */
export function machineSvg(): Promise<string> {
  diagram ??= layoutDiagram(graph).then((placed) => diagramSvg(placed, `The ${graph.id} state machine`));
  return diagram;
}

/** The keys of the console's environment (DURABLE_AGENT_KEYS, DURABLE_AGENT_KEY_FILE), read when a sealed run is first shown. */
const consoleKeys = environmentKeys();

/**
 * `keys`: what opens sealed runs (default those of the console's environment); a sealed run
 * shown without its key shows what stays readable, and says which key it needs.
 */
export async function runDetail(run: ConsoleRun, keys: KeysGiven | null = consoleKeys): Promise<RunDetail> {
  if (keys !== null && run.store?.giveKeys) run.store.giveKeys(keys);
  const detail = await detailOf(run);
  return detail.sealed === null ? detail : sealedShown(detail, detail.sealed);
}

async function detailOf(run: ConsoleRun): Promise<RunDetail> {
  const location = run.store?.location ?? run.archivedJournal!;
  const base = { key: run.key, source: run.source, location, sealed: null };
  let loaded: LoadedRun;
  try {
    loaded = run.store ? await run.store.load() : readArchived(run.archivedJournal!);
  } catch (error) {
    if (!(error instanceof StoreCorruptError)) throw error;
    const file = run.store?.journalPath ?? run.archivedJournal;
    const prefix = file ? readablePrefix(file, error) : null;
    const damage = error.message;
    if (!prefix) return { ...base, readOnly: 'its journal is damaged', damage, summary: null, status: null, transcript: [], steps: [], processes: [], ledger: [], lineage: NO_LINEAGE, pending: [] };
    return { ...base, ...readView(location, prefix), sealed: sealedContentOf(prefix), readOnly: 'its journal is damaged', damage, status: null, pending: [] };
  }
  const view = readView(location, loaded, run.store && keptInFolder(run.store) ? forksOf(run.store, loaded.header.runId) : []);
  const sealed = sealedContentOf(loaded);
  if (!run.store) return { ...base, ...view, sealed, readOnly: 'an archived run', damage: null, status: null, pending: [] };
  // The run's own calls, then those its sub-agent runs wait on: decided from this page, they go to that run.
  const [status, pending, tree] = await Promise.all([readRunStatus(run.store), treePendingDecisions(run.store), treeOf(run, loaded)]);
  return { ...base, ...view, sealed, lineage: { ...view.lineage, ...tree }, readOnly: null, damage: null, status, pending: pending.map(withWords) };
}

/** What the run's content needs when it was loaded sealed (its refusal), or null when it shows. An archived or damaged sealed run is read as its journal holds it. */
function sealedContentOf(loaded: LoadedRun): SealedContent | null {
  const refused = loaded.contentRefused;
  if (refused) {
    const keyId = (refused as { keyId?: unknown }).keyId;
    return { keyId: typeof keyId === 'string' ? keyId : null, message: refused.message };
  }
  if (loaded.header.sealed !== undefined && loaded.records.some((stored) => Object.hasOwn(stored.record, 'sealed'))) {
    return { keyId: null, message: 'This run is sealed, and the console shows it as its journal holds it here: read it with `durable-agent history --transcript` and the master key.' };
  }
  return null;
}

/**
 * The detail with every sealed text named instead of shown: the task says what the run needs,
 * every other sealed string is "(sealed)". Never a sealed string on the page as if it were text.
 */
function sealedShown(detail: RunDetail, sealed: SealedContent): RunDetail {
  const shown = namedSealed(detail) as RunDetail;
  if (shown.summary && isSealedValue(detail.summary?.task)) shown.summary = { ...shown.summary, task: `(sealed) ${sealed.message}` };
  return { ...shown, sealed };
}

function namedSealed(value: unknown): unknown {
  if (typeof value === 'string') return isSealedValue(value) ? '(sealed)' : value;
  if (Array.isArray(value)) return value.map(namedSealed);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, namedSealed(inner)]));
}

function withWords({ store: _store, ...call }: TreePendingDecision): PendingCall {
  const plan = call.needs === 'wait' ? waitPlanOf(call.input, call.since ?? 0) : null;
  return { ...call, waitsFor: waitsForWords(call), event: plan?.event ?? null };
}

const NO_LINEAGE: Lineage = { forkedFrom: null, forks: [], calledBy: null, children: [] };

/** The run's place in its tree of sub-agent runs: its parent and its children, with their pages' keys where the console shows them. */
async function treeOf(run: ConsoleRun, loaded: LoadedRun): Promise<Pick<Lineage, 'calledBy' | 'children'>> {
  const store = run.store!;
  const folder = run.folder ? runsFolderOf(store) : null;
  // A run's children are in its folder of runs: one the console shows as a run by id of the same state folder.
  const keyOfRun = async (runId: string): Promise<string | null> => {
    // A fleet run's parent and children are fleet runs: their keys are their ids.
    if (run.source === 'fleet') return [FLEET_KEY, runId].join(KEY_SEPARATOR);
    if (!folder || !run.folder) return null;
    if (await folder.store(runId).exists()) return keyOf(run.folder.index, runId, null);
    return null;
  };
  const ownKey = async (runId: string): Promise<string | null> => {
    const byId = await keyOfRun(runId);
    if (byId || !folder || !run.folder) return byId;
    // The state folder's own run: the run by no id.
    const own = openStore({ dir: folder.root });
    try {
      return (await own.exists()) && (await own.load({ fromLastSnapshot: true })).header.runId === runId ? keyOf(run.folder.index, null, null) : null;
    } catch {
      return null;
    }
  };
  const called = loaded.header.calledBy;
  const calledBy = called ? { runId: called.runId, toolUseId: called.toolUseId, key: await ownKey(called.runId) } : null;
  const rowsOf = async (children: readonly ChildRun[]): Promise<ChildRow[]> =>
    Promise.all(
      children.map(async (child) => ({
        runId: child.runId,
        toolUseId: child.toolUseId,
        key: await keyOfRun(child.runId),
        state: child.state,
        turn: child.turn,
        tokens: totalTokens(child.usage),
        costUsd: child.costUsd,
        children: await rowsOf(child.children),
      })),
    );
  return { calledBy, children: await rowsOf(await childRunsOf(store, loaded.header.runId)) };
}

/** The runs forked from a folder run, from the note beside its journal; a note that cannot be read shows none. */
function forksOf(store: FolderRunStore, runId: string): RunDetail['lineage']['forks'] {
  try {
    return readForkNotes(store.dir, runId).map((fork) => ({ seq: fork.seq, runId: fork.child.runId, location: fork.child.location }));
  } catch {
    return [];
  }
}

function readArchived(file: string): LoadedRun {
  const journal = readJournal(file, fs.readFileSync(file));
  return { header: journal.header, records: journal.records, tornTail: null, totalBytes: journal.goodLength };
}

function readView(location: string, loaded: LoadedRun, forks: RunDetail['lineage']['forks'] = []): Pick<RunDetail, 'summary' | 'transcript' | 'steps' | 'processes' | 'ledger' | 'lineage'> {
  const fold = foldJournal(location, loaded);
  const context = fold.context;
  const last = loaded.records[loaded.records.length - 1]!.record;
  const counted = typeof context.costUsd === 'number' ? context.costUsd : null;
  const model = loaded.header.startedBy?.model;
  const timeline = runViewOf(location, loaded, graph, { forks });
  return {
    summary: {
      runId: loaded.header.runId,
      state: fold.state,
      task: context.task,
      turn: context.turn,
      maxTurns: context.maxTurns,
      tokens: totalTokens(context.usage),
      costUsd: counted ?? (model ? estimateCost(model, context.usage) : null),
      finalText: context.finalText,
      failure: context.failure?.message ?? null,
      lastSeq: last.seq,
      lastSaveAt: last.at,
    },
    transcript: withoutSealed(transcriptOf(location, loaded).entries) as TranscriptEntry[],
    steps: timeline.steps.map((step) => ({
      seq: step.seq,
      at: step.at,
      point: step.point,
      state: step.state,
      event: step.event,
      turn: step.turn,
      bytes: step.bytes,
      tools: step.tools,
      edge: step.edge,
      process: step.process,
      reconcile: step.reconcile,
      reused: step.reused,
      waiting: step.waiting,
      decided: step.decided.map((decision) => `${decision.toolUseId} ${decision.name} ${decision.words}`),
    })),
    processes: timeline.processes,
    ledger: timeline.ledger.map((entry) => ({
      toolUseId: entry.toolUseId,
      name: entry.name,
      kind: entry.kind,
      isError: entry.isError,
      content: entry.content.length > LEDGER_TEXT ? `${entry.content.slice(0, LEDGER_TEXT - 1)}…` : entry.content,
      seq: entry.seq,
    })),
    lineage: { forkedFrom: timeline.forkedFrom, forks: timeline.forks, calledBy: null, children: [] },
  };
}
