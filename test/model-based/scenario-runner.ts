/**
 * Plays a crash-path scenario on the real runtime with a real file store: uninterrupted, crashed
 * at a label, and resumed from the store alone in a fresh runtime. The tools act on a "world"
 * that outlives the crash (as the outside world does) and count every real execution.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Decision } from '../../machines/agent-loop.types.ts';
import type { DecisionRequest } from '../../src/awaits/decision-step.ts';
import { forkRun } from '../../src/fork/fork-run.ts';
import { endTurnReply, scriptedModel, stopReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { CrashPoints, SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent, RunResult } from '../../src/core/run-events.ts';
import type { MasterKeys } from '../../src/seal/keys.ts';
import { FileStore, JOURNAL_FILE } from '../../src/store/file-store.ts';
import { parseCommitMark } from '../../src/store/journal/framing.ts';
import type { RunStore } from '../../src/store/store.ts';
import { defineTool, type ToolDefinition } from '../../src/tools/tool.ts';
import { ExecutionCounter } from '../helpers/counting-tools.ts';
import { FinishOrder } from '../helpers/finish-order.ts';
import { CANCELLATION, FINISH_TEXT, type Scenario, stepFingerprint, type TakeUp } from './crash-paths.ts';
import { FORK_DECIDER, OTHER_RUN_DECIDER, SHARED_CALL_INPUT } from './walks/decision-identity.ts';

export interface World {
  /** Every call of a tool's run(), whether it got as far as its effect or threw first. */
  attempts: ExecutionCounter;
  /** Side effects that took place (a tool that throws does so before its effect). */
  effects: ExecutionCounter;
  /** Idempotency keys of charges that happened, for charge_card's verify(). */
  charged: Set<string>;
  /** How many times the onDecision handler was asked about each call. */
  asked: Map<string, number>;
  /** The order the calls of a parallel turn finish in, while the scenario plays (a resume runs them as they come). */
  order: FinishOrder | null;
}

export function newWorld(): World {
  return { attempts: new ExecutionCounter(), effects: new ExecutionCounter(), charged: new Set(), asked: new Map(), order: null };
}

export const READ_ONLY_TOOLS = new Set(['lookup']);

/** The context window of a scenario with client compaction, in input tokens (trigger at 80%). */
export const SCENARIO_WINDOW = 2_000;

export function scenarioTools(scenario: Scenario, world: World): ToolDefinition[] {
  const act = (name: string, toolUseId: string, key: string, result: string): unknown => {
    world.attempts.record(toolUseId, key);
    if (scenario.behaviours[toolUseId] === 'throws') throw new Error(`${name} failed on purpose`);
    if (!READ_ONLY_TOOLS.has(name)) world.effects.record(toolUseId, key);
    return scenario.behaviours[toolUseId] === 'unserializable' ? unserializable(name, result) : result;
  };
  return [
    defineTool<{ q: string }>({
      name: 'lookup',
      description: 'read-only',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      readOnly: true,
      run: async ({ q }, ctx) => {
        // The attempt counts when the call starts; it returns in its turn of the scenario's finish order.
        const result = act('lookup', ctx.toolUseId, ctx.idempotencyKey, `answer to ${q}`);
        await world.order?.turnOf(ctx.toolUseId);
        return result;
      },
    }),
    defineTool<{ to: string }>({
      name: 'send_email',
      description: 'side effect, cannot be checked',
      inputSchema: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
      readOnly: false,
      run: ({ to }, ctx) => act('send_email', ctx.toolUseId, ctx.idempotencyKey, `sent to ${to}`),
    }),
    defineTool<{ amount: number }>({
      name: 'charge_card',
      description: 'side effect, can be checked',
      inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
      readOnly: false,
      run: ({ amount }, ctx) => {
        const result = act('charge_card', ctx.toolUseId, ctx.idempotencyKey, `charged ${amount}`);
        world.charged.add(ctx.idempotencyKey);
        return result;
      },
      verify: (_input, ctx) => ({ happened: world.charged.has(ctx.idempotencyKey) }),
    }),
    defineTool<{ text: string }>({
      name: 'publish',
      description: 'side effect, cannot be checked, needs a person’s approval',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      readOnly: false,
      needsApproval: true,
      run: ({ text }, ctx) => act('publish', ctx.toolUseId, ctx.idempotencyKey, `published ${text}`),
    }),
  ];
}

/** A result the ledger cannot hold, after the tool's effect took place: a BigInt, or a circular object. */
function unserializable(name: string, result: string): unknown {
  if (READ_ONLY_TOOLS.has(name)) return { result, rows: 10n ** 20n };
  const circular: Record<string, unknown> = { result };
  circular.self = circular;
  return circular;
}

export interface Played {
  result: RunResult | null;
  crashedAt: string | null;
  events: RunEvent[];
  /** Every crash label the run passed, in order. */
  passed: string[];
  /**
   * Where the scenario's processes stood when it stopped: the process it was in (0: the one that
   * started the run; n: the one scenario.takeUps[n - 1] started), and whether that process had
   * reached the step that ends it (a crash right at it).
   */
  at: { process: number; killed: boolean };
}

/** Where scenario runs are stored: a fresh store per key (a directory, a run id). */
export interface ScenarioStores {
  readonly name: string;
  open(key: string, writeFaults?: string): RunStore;
  /** Releases what open() holds (a file descriptor); the journal stays. */
  close(store: RunStore): void;
  /** A power loss: drops what was written without an fsync; returns how many bytes that was. */
  loseUnsynced?(key: string): number;
  /** The decisions kept with the runs a fresh start moved aside under this key (stores that can say). */
  archivedDecisions?(key: string): Promise<Decision[]>;
  /** Where a fork of the run under this key goes (stores a run can be forked into). */
  forkKey?(key: string): string;
}

/** File stores; with keys, every run they start is sealed (and opened with the same keys on resume). */
export function fileStores(keys?: MasterKeys): ScenarioStores {
  return {
    name: keys ? 'sealed file store' : 'file store',
    open: (dir, writeFaults) => new FileStore(path.join(dir, '.durable-agent'), { ...(writeFaults ? { writeFaults } : {}), ...(keys ? { keys } : {}) }),
    close: (store) => (store as FileStore).close(),
    archivedDecisions: async (dir) => {
      const archive = path.join(dir, '.durable-agent', 'archive');
      if (!fs.existsSync(archive)) return [];
      const inboxes = fs.readdirSync(archive).filter((name) => name.startsWith('decisions-'));
      return inboxes.flatMap((inbox) =>
        fs.readdirSync(path.join(archive, inbox)).map((file) => (JSON.parse(fs.readFileSync(path.join(archive, inbox, file), 'utf8')) as { decision: Decision }).decision),
      );
    },
    forkKey: (dir) => `${dir}-fork`,
    loseUnsynced: (dir) => {
      // The commit mark counts what the last fsync made durable: everything after it is cut off.
      const journal = path.join(dir, '.durable-agent', JOURNAL_FILE);
      const bytes = fs.readFileSync(journal);
      const mark = parseCommitMark(bytes, bytes.indexOf(0x0a) + 1, 2);
      fs.truncateSync(journal, mark.bytes);
      return bytes.length - mark.bytes;
    },
  };
}

/**
 * A cancel asked from outside at the scenario's step: written to the run's real control inbox
 * the moment the runtime reports that step saved (the file inbox writes synchronously), so that a
 * crash at that step's points or later finds it there, and a crash before it does not.
 */
function cancelAsker(scenario: Scenario, store: RunStore): (event: RunEvent) => void {
  let asked = false;
  return (event) => {
    if (asked || !scenario.cancelAt || event.type !== 'saved' || event.event === 'MODEL_USAGE') return;
    const at = stepFingerprint(event.state, event.event, event.turn, event.pending.map((call) => call.id), event.recordedIds);
    if (at !== scenario.cancelAt) return;
    asked = true;
    void store.control!.write({ kind: 'cancel', ...CANCELLATION });
  };
}

function parts(scenario: Scenario, key: string, world: World, withFaults: boolean, events: RunEvent[], stores: ScenarioStores, watch: (event: RunEvent) => void = () => {}) {
  const faults = scenario.failingEffectWrites.map((n) => `effect-write:${n}`).join(',');
  const store = stores.open(key, withFaults && faults ? faults : undefined);
  const askCancel = cancelAsker(scenario, store);
  return {
    store,
    model: scriptedModel([...scenario.replies, endTurnReply(FINISH_TEXT)], scenario.compaction?.summary === 'empty' ? { summary: stopReply('end_turn') } : {}),
    // A window the scenarios stay under unless a reply holds LONG_TEXT (crash-paths.ts).
    ...(scenario.compaction ? { compaction: { mode: 'client' as const, contextWindow: SCENARIO_WINDOW } } : {}),
    tools: scenarioTools(scenario, world),
    observer: (event: RunEvent) => {
      events.push(event);
      world.order?.observe(event);
      askCancel(event);
      watch(event);
    },
    // Out of the way: no scenario's tool hangs, and a call of a parallel turn returns only once
    // the outcomes ranked before it are durable, so on a disk loaded by other suites (fsyncs of
    // seconds) a tight limit would end calls that did nothing wrong.
    toolTimeoutMs: 600_000,
    allowQuestions: true,
    onDecision: (request: DecisionRequest) => {
      world.asked.set(request.tool_use_id, (world.asked.get(request.tool_use_id) ?? 0) + 1);
      // A path that ends waiting has no decision: the run stops there (status 'waiting').
      return scenario.decisions[request.tool_use_id] ?? null;
    },
    wait: false,
  };
}

/**
 * A process of the scenario is killed right after it saves the step that ends it: the `saved`
 * event names the step, and the crash point the record passes next throws. A crash armed at
 * that same point comes first (the process is then both killed and crashed there).
 */
class ScenarioPoints extends CrashPoints {
  private killNext = false;
  killed = false;
  /** What the world does at the step just saved (a fork), done before the run goes past its point. */
  private sideWork: Promise<void> | null = null;

  /** Called on each `saved` event: marks the end of the process when the step saved is `after`. */
  watch(event: RunEvent, after: string | null): void {
    if (after === null || event.type !== 'saved' || event.event === 'MODEL_USAGE') return;
    if (stepFingerprint(event.state, event.event, event.turn, event.pending.map((call) => call.id), event.recordedIds) === after) this.killNext = true;
  }

  /** A new process: nothing marked yet. */
  begin(): void {
    this.killNext = false;
    this.killed = false;
  }

  /** Work of the world at the step being saved: awaited before the crash point of that record, so a crash there comes after it. */
  alongside(work: Promise<void>): void {
    this.sideWork = work;
  }

  override fireIfArmed(label: string): Promise<void> | undefined {
    const work = this.sideWork;
    if (work) {
      this.sideWork = null;
      return work.then(() => this.fire(label));
    }
    return this.fire(label);
  }

  private fire(label: string): Promise<void> | undefined {
    const kill = this.killNext;
    this.killNext = false;
    if (kill) this.killed = true;
    const crashed = super.fireIfArmed(label);
    if (kill) throw new ProcessEnded(label);
    return crashed;
  }
}

/** The end of a process of the scenario: killed, as the scenario says, right after a step. */
class ProcessEnded extends Error {
  override readonly name = 'ProcessEnded';
  constructor(readonly label: string) {
    super(`the scenario's process ends here (${label})`);
  }
}

/** How a process opens: it starts the run, resumes it plainly, or takes it up with what a take-up gives. */
type Opening = { kind: 'start' } | { kind: 'resume'; given?: TakeUp['resume'] };

/**
 * Plays the scenario's processes from `process` on, the first opening as `opening`, each after
 * the one before it ended (by itself, or killed where the scenario says), until the last ends or
 * the armed crash fires. The crash labels count on across processes, as the path counts them.
 */
async function playFrom(scenario: Scenario, key: string, world: World, stores: ScenarioStores, crashPoints: ScenarioPoints, process: number, opening: Opening): Promise<Played> {
  const events: RunEvent[] = [];
  let result: RunResult | null = null;
  for (let index = process, how = opening; ; index++) {
    const end = scenario.takeUps?.[index];
    crashPoints.begin();
    const fork = forkWatcher(scenario, key, stores, crashPoints);
    const base = parts(scenario, key, world, how.kind === 'start', events, stores, (event) => {
      crashPoints.watch(event, end?.after ?? null);
      fork(event);
    });
    try {
      result =
        how.kind === 'start'
          ? await startRun({
              ...base,
              task: 'the task',
              maxTurns: scenario.maxTurns,
              maxPausesInARow: scenario.maxPausesInARow,
              budget: scenario.budget,
              crashPoints,
              // The other run is moved aside, its inbox with it.
              fresh: scenario.anotherRunFirst !== undefined,
            })
          : await resumeRun({ ...base, ...how.given, crashPoints });
    } catch (error) {
      if (error instanceof SimulatedCrash) return { result: null, crashedAt: error.label, events, passed: crashPoints.passed, at: { process: index, killed: crashPoints.killed } };
      if (!(error instanceof ProcessEnded)) throw error;
      result = null;
    } finally {
      stores.close(base.store);
    }
    if (!end) return { result, crashedAt: null, events, passed: crashPoints.passed, at: { process: index, killed: false } };
    how = { kind: 'resume', given: end.resume };
    // A resume re-runs the open calls as they come (side by side where they may): none waits for another.
    if (world.order) world.order.active = false;
  }
}

/** Starts the scenario under a fresh key; with a label, the run is crashed right after it. */
export async function playScenario(scenario: Scenario, key: string, world: World, stores: ScenarioStores, crashAfter?: string): Promise<Played> {
  world.order = scenario.finishTogether ? new FinishOrder(scenario.finishTogether, true) : scenario.finishOrder ? new FinishOrder(scenario.finishOrder) : null;
  if (scenario.anotherRunFirst) await playAnotherRun(scenario, scenario.anotherRunFirst.tool_use_id, key, world, stores);
  return playFrom(scenario, key, world, stores, new ScenarioPoints(crashAfter), 0, { kind: 'start' });
}

/** The decision a person gave the other run's call, in its inbox. */
export function otherRunDecision(tool_use_id: string): Decision {
  return { tool_use_id, verdict: 'approved', by: OTHER_RUN_DECIDER, at: Date.now(), note: 'for the other run' };
}

/**
 * Another run in the store, before the scenario's: its model names the same tool with the same
 * input under the same id; it stops waiting for a decision (status 'waiting'), and a person
 * approves the call in its inbox. Nothing of it runs in the world.
 */
async function playAnotherRun(scenario: Scenario, tool_use_id: string, key: string, world: World, stores: ScenarioStores): Promise<void> {
  const store = stores.open(key);
  try {
    const model = scriptedModel([toolUseReply([{ id: tool_use_id, name: 'publish', input: SHARED_CALL_INPUT }])]);
    const other = await startRun({ store, model, tools: scenarioTools(scenario, world), task: 'the other task', maxTurns: 1, wait: false, allowQuestions: true });
    if (other.status !== 'waiting') throw new Error(`the other run should wait for ${tool_use_id}, not end ${other.status}`);
    await store.decisions!.write(otherRunDecision(tool_use_id));
  } finally {
    stores.close(store);
  }
}

/** Where the fork walk forks the run: the child of the run under `key`. */
export function forkKeyOf(stores: ScenarioStores, key: string): string {
  if (!stores.forkKey) throw new Error(`the ${stores.name} cannot take a fork of a scenario's run`);
  return stores.forkKey(key);
}

/** The decision the person writes into the parent's inbox as the run is forked. */
function forkDecision(forkAt: NonNullable<Scenario['forkAt']>): Decision {
  const { decision, tool_use_id } = forkAt;
  const base = { tool_use_id, by: FORK_DECIDER, at: Date.now() };
  if (decision.verdict === 'approved') return { ...base, verdict: 'approved' };
  return decision.verdict === 'denied' ? { ...base, verdict: 'denied', reason: decision.reason } : { ...base, verdict: 'answered', text: decision.text };
}

/**
 * The fork walk: as the run saves the step that waits for the call, a person writes its decision
 * to the run's inbox and the run is forked at that record, the decision written before the fork
 * or while the fork is under way (once it has read the parent, before it writes the child).
 */
function forkWatcher(scenario: Scenario, key: string, stores: ScenarioStores, crashPoints: ScenarioPoints): (event: RunEvent) => void {
  const forkAt = scenario.forkAt;
  if (!forkAt) return () => {};
  return (event) => {
    if (event.type !== 'saved' || event.event === 'MODEL_USAGE') return;
    if (stepFingerprint(event.state, event.event, event.turn, event.pending.map((call) => call.id), event.recordedIds) !== forkAt.at) return;
    crashPoints.alongside(forkWithDecision(forkAt, key, event.seq, stores));
  };
}

/** The child's store as the fork sees it, `first` done as the fork takes the child's lock (what a fork uses of a store, delegated). */
function duringFork(child: RunStore, first: () => Promise<unknown>): RunStore {
  const used: Pick<RunStore, 'location' | 'exists' | 'lock' | 'createWith'> = {
    location: child.location,
    exists: () => child.exists(),
    lock: async (options) => {
      await first();
      return child.lock(options);
    },
    createWith: (header, records) => child.createWith!(header, records),
  };
  return used as RunStore;
}

async function forkWithDecision(forkAt: NonNullable<Scenario['forkAt']>, key: string, seq: number, stores: ScenarioStores): Promise<void> {
  const parent = stores.open(key);
  const child = stores.open(forkKeyOf(stores, key));
  const decide = () => parent.decisions!.write(forkDecision(forkAt));
  try {
    if (forkAt.moment === 'before-fork') await decide();
    // During the fork: it has read the parent, and takes the child's lock to write it.
    const to: RunStore = forkAt.moment === 'during-fork' ? duringFork(child, decide) : child;
    await forkRun({ from: parent, to, at: seq });
  } finally {
    stores.close(parent);
    stores.close(child);
  }
}

/**
 * Resumes from the store alone, with a fresh runtime and no write faults (the disk has
 * recovered), and plays the scenario's processes after it. Where the crash left the run at the
 * end of its process (`at.killed`, or `stoppedByItself`: at rest in a final state with a take-up
 * to come), the resume is the next process, with what it gives; otherwise a plain one, which
 * goes on with the process the crash stopped.
 */
export async function resumeScenario(scenario: Scenario, key: string, world: World, stores: ScenarioStores, at: Played['at'] = { process: 0, killed: false }, stoppedByItself = false): Promise<Played> {
  if (world.order) world.order.active = false;
  const next = scenario.takeUps?.[at.process];
  const ended = next !== undefined && (at.killed || (stoppedByItself && next.after === null));
  const opening: Opening = ended ? { kind: 'resume', given: next.resume } : { kind: 'resume' };
  return playFrom(scenario, key, world, stores, new ScenarioPoints(undefined), ended ? at.process + 1 : at.process, opening);
}

/** A resume by another command than the one that started the run; returns what it threw (it should refuse). */
export async function resumeScenarioAs(scenario: Scenario, key: string, world: World, stores: ScenarioStores, command: string): Promise<unknown> {
  const base = parts(scenario, key, world, false, [], stores);
  try {
    await resumeRun({ ...base, command });
    return null;
  } catch (error) {
    return error;
  } finally {
    stores.close(base.store);
  }
}
