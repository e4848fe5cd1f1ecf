/**
 * One crash-and-resume check of a generated path at one crash label, for any store: crash the
 * real runtime there, resume from the store alone, and hold the result to the invariants.
 */
import { expect } from 'vitest';
import { announcedEffectOf } from '../../machines/agent-loop.effects.ts';
import { awaitsDecision, budgetStopOf } from '../../machines/agent-loop.logic.ts';
import { type Decision, FINAL_STATES, type Message, type PendingCall, type ToolOutcome } from '../../machines/agent-loop.types.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { RunCancelledError } from '../../src/control/control-request.ts';
import { endTurnReply, scriptedModel } from '../../src/model/scripted-model.ts';
import { resumeRun } from '../../src/runtime/run-api.ts';
import { API_COMMAND, RunOriginMismatchError } from '../../src/runtime/run-origin.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import type { DurableView } from '../../src/store/journal/journal-codec.ts';
import type { LoadedRun, StoredRecord } from '../../src/store/store.ts';
import { toolResultOf, toolUseProblems } from '../helpers/messages.ts';
import { type CrashPath, describeStep, describeTrace, FINISH_TEXT, type Scenario } from './crash-paths.ts';
import {
  forkKeyOf,
  newWorld,
  type Played,
  playScenario,
  READ_ONLY_TOOLS,
  resumeScenario,
  resumeScenarioAs,
  type ScenarioStores,
  scenarioTools,
  type World,
} from './scenario-runner.ts';
import { FORK_DECIDER, OTHER_RUN_DECIDER } from './walks/decision-identity.ts';

export interface CrashCase {
  name: string;
  path: CrashPath;
  stepIndex: number;
  label: string;
  /**
   * After the kill, the machine loses power too: what was written without an fsync is gone.
   * Only where the run had such a record that matters: a turn's last ledger entry (with the
   * entries written in one unit with it: group commit), whose fsync is checkpoint B's, right after it.
   * How many records it takes back.
   */
  powerLoss?: number;
}

/** With `powerLoss`, a second case at each turn's last ledger entry, where a power loss differs from a kill. */
export function crashCases(paths: CrashPath[], options: { powerLoss?: boolean } = {}): CrashCase[] {
  return paths.flatMap((crashPath) =>
    crashPath.steps.flatMap((step, stepIndex) =>
      step.labels.flatMap((label) => {
        const name = `${describeStep(step)} ✂ ${label} (path ${crashPath.id}${stepIndex > 1 ? `, step ${stepIndex}` : ''})`;
        const crash = { name, path: crashPath, stepIndex, label };
        const unsynced = options.powerLoss && label.startsWith('after-effect-write:') ? (step.unsynced ?? 0) : 0;
        return unsynced ? [crash, { ...crash, name: `${name} + power loss`, powerLoss: unsynced }] : [crash];
      }),
    ),
  );
}

export interface Baseline {
  status: string;
  messages: Message[];
  passed: string[];
}

/** The scenario played without a crash, once per path: what every crashed-and-resumed run is held to. */
export class Baselines {
  private readonly cache = new Map<number, Promise<Baseline>>();
  constructor(
    private readonly stores: ScenarioStores,
    private readonly freshKey: () => string,
  ) {}

  private readonly resumedCache = new Map<number, Promise<Baseline>>();

  of(crashPath: CrashPath): Promise<Baseline> {
    let baseline = this.cache.get(crashPath.id);
    if (!baseline) {
      baseline = (async () => {
        const key = this.freshKey();
        const played = await playScenario(crashPath.scenario, key, newWorld(), this.stores);
        return { status: played.result!.status, messages: await this.messagesOf(key), passed: played.passed };
      })();
      this.cache.set(crashPath.id, baseline);
    }
    return baseline;
  }

  /**
   * The scenario played without a crash, then resumed: what a run crashed right after its final
   * record is held to. Resuming a finished run retries a failure worth retrying (after a pause
   * limit, the model continues the paused content).
   */
  resumedAfterTheEnd(crashPath: CrashPath): Promise<Baseline> {
    let baseline = this.resumedCache.get(crashPath.id);
    if (!baseline) {
      baseline = (async () => {
        const key = this.freshKey();
        const world = newWorld();
        const played = await playScenario(crashPath.scenario, key, world, this.stores);
        const resumed = await resumeScenario(crashPath.scenario, key, world, this.stores, played.at);
        return { status: resumed.result!.status, messages: await this.messagesOf(key), passed: played.passed };
      })();
      this.resumedCache.set(crashPath.id, baseline);
    }
    return baseline;
  }

  private async messagesOf(key: string): Promise<Message[]> {
    const store = this.stores.open(key);
    const view = foldJournal(store.location, await store.load());
    this.stores.close(store);
    return view.context.messages;
  }
}

export async function checkCrash(crash: CrashCase, stores: ScenarioStores, baselines: Baselines, key: string): Promise<void> {
  try {
    await checkCrashInvariants(crash, stores, baselines, key);
  } catch (error) {
    const trace = describeTrace(crash.path, crash.stepIndex, crash.label);
    (error as Error).message += `\n\nevent trace of path ${crash.path.id} on the ${stores.name} (scenario ${crash.path.scenarioKey}):\n${trace}`;
    throw error;
  }
}

/** What a crash test knows once the run is crashed: the store as the crash left it, and what had run by then. */
interface AtCrash {
  crash: CrashCase;
  scenario: Scenario;
  stores: ScenarioStores;
  key: string;
  world: World;
  uninterrupted: Baseline;
  baseline: Baseline;
  loaded: LoadedRun;
  view: DurableView;
  attempts: ReadonlyMap<string, number>;
  effects: ReadonlyMap<string, number>;
  /** The calls a resume must settle (up to the first that waits for a decision). */
  openCalls: PendingCall[];
  decided: ReadonlySet<string>;
  asked: ReadonlyMap<string, number>;
  /** Which of the scenario's processes the crash stopped, and whether right at its end. */
  at: Played['at'];
}

/** And once it is resumed from the store alone. */
interface AfterResume extends AtCrash {
  /** The resume and the scenario's processes after it: the events of them all, the result of the last. */
  resumed: Played;
  /** The journal as the resume left it, read once: nothing writes to it while the checks after the resume read it. */
  finalLoaded: LoadedRun;
  final: DurableView;
  messages: Message[];
  /** The run stopped again to wait for a decision: its turn's results come once decided. */
  stillWaiting: boolean;
  /** A run cancelled inside a turn ends with that turn's tool_use message, its results never sent. */
  cancelledInTurn: boolean;
  /** How the resume settled each call it found open. */
  decisions: Map<string, string>;
  /** A cancel waiting when the resume began applied first: nothing of the open turn ran. */
  cancelledAtOnce: boolean;
}

type Invariant<Facts> = (facts: Facts) => void | Promise<void>;

/**
 * The invariants, each named for what it holds, by the part of the runtime it belongs to: the
 * core loop's (nothing lost, nothing twice, every tool_use answered), reconcile's, approval's,
 * the origin check's, cancel's and the budget's. Held at the crash, then after the resume, in
 * this order.
 */
const AT_CRASH: ReadonlyArray<Invariant<AtCrash>> = [
  // approval: a call that needs a decision never ran before its decision was durable.
  noCallRanBeforeItsDecision,
  // approval: a call ran only on an approval recorded for it, by its id (never one of a twin call).
  anApprovalRunsOnlyItsCall,
  // approval: a decision given in another run's inbox is never this run's.
  aDecisionStaysWithItsRun,
  // origin: a resume by another command is refused, with nothing written and nothing run.
  anotherCommandIsRefused,
];

const AFTER_RESUME: ReadonlyArray<Invariant<AfterResume>> = [
  // core: valid for the Messages API.
  everyToolUseAnsweredOnce,
  // core: no side effect took place twice for one tool_use_id.
  noSideEffectTwice,
  // reconcile: each call left open by the crash was settled by the right branch.
  eachOpenCallTookItsBranch,
  // approval: a decided call is never asked again, and every call is decided once.
  eachCallDecidedOnce,
  // approval: a denied call (or a question answered or denied: the decision is its outcome) never runs, at any crash point.
  aDeniedCallNeverRuns,
  // approval: a call ran only on an approval recorded for it, by its id (never one of a twin call).
  anApprovalRunsOnlyItsCall,
  // approval: a decision given in another run's inbox is never this run's, and stays with that run.
  aDecisionStaysWithItsRun,
  // approval and fork: a decision written as the run was forked is taken by one side only, and by one side.
  aForkedDecisionGoesToOneSide,
  // core and budget: the run ends as the uninterrupted one (or at the budget a lost reply reached).
  endsAsTheUninterruptedRun,
];

async function checkCrashInvariants(crash: CrashCase, stores: ScenarioStores, baselines: Baselines, key: string): Promise<void> {
  const atCrash = await crashed(crash, stores, baselines, key);
  for (const invariant of AT_CRASH) await invariant(atCrash);
  // cancel: a run cancelled before the crash stays cancelled, and that is all there is to check.
  if (atCrash.view.state === 'cancelled') return aCancelledRunStaysCancelled(atCrash);
  const afterResume = await resumedAfter(atCrash);
  for (const invariant of AFTER_RESUME) await invariant(afterResume);
}

/** Plays the scenario up to the crash (and the power loss), and reads what it left. */
async function crashed(crash: CrashCase, stores: ScenarioStores, baselines: Baselines, key: string): Promise<AtCrash> {
  const { scenario, steps } = crash.path;
  const crashedAfterTheEnd = crash.stepIndex === steps.length - 1 && crash.label === steps[crash.stepIndex]!.labels.at(-1);
  const uninterrupted = await baselines.of(crash.path);
  const baseline = crashedAfterTheEnd && uninterrupted.status === 'failed' ? await baselines.resumedAfterTheEnd(crash.path) : uninterrupted;
  const world = newWorld();

  const played = await playScenario(scenario, key, world, stores, crash.label);
  expect(played.crashedAt).toBe(crash.label);
  const beforePowerLoss = crash.powerLoss ? await reload(stores, key) : null;
  if (crash.powerLoss) expect(stores.loseUnsynced!(key), 'bytes written without an fsync').toBeGreaterThan(0);

  // core: a crash at a transition boundary leaves a store that loads, with nothing cut off.
  const atCrashStore = stores.open(key);
  const loaded = await atCrashStore.load();
  stores.close(atCrashStore);
  // The turn's last ledger entry (and its unit) is gone with the power: the run stands at the record before it.
  if (crash.powerLoss) expect(loaded.records.length).toBe(beforePowerLoss!.records.length - crash.powerLoss);
  expect(loaded.tornTail).toBeNull();
  const view = foldJournal(atCrashStore.location, loaded);
  const openTurn = view.state === 'pendingTool' || view.state === 'effectRecorded';
  // Reconcile settles the turn's calls up to the first that waits for a decision: that one and the rest never started.
  const firstUndecided = view.context.pending.findIndex((call) => !view.ledger.has(call.id) && awaitsDecision(view.context, call));
  const openCalls = openTurn ? view.context.pending.slice(0, firstUndecided === -1 ? undefined : firstUndecided) : [];
  const decided = new Set(loaded.records.flatMap((r) => (r.record.decisions?.add ?? []).map((d) => d.tool_use_id)));
  return {
    crash,
    scenario,
    stores,
    key,
    world,
    uninterrupted,
    baseline,
    loaded,
    view,
    attempts: new Map(world.attempts.runs),
    effects: new Map(world.effects.runs),
    openCalls,
    decided,
    asked: new Map(world.asked),
    at: played.at,
  };
}

/** Resumes from the store alone and reads what the resume left. */
async function resumedAfter(atCrash: AtCrash): Promise<AfterResume> {
  const { scenario, key, world, stores, at, view } = atCrash;
  // A reply lost at the budget stops the run where the uninterrupted one went on: what follows is another run (endsAsTheUninterruptedRun).
  const played = lostReplyStop(atCrash) ? { ...scenario, takeUps: scenario.takeUps?.slice(0, at.process) } : scenario;
  const resumed = await resumeScenario(played, key, world, stores, at, FINAL_STATES.includes(view.state));
  const finalStore = stores.open(key);
  const finalLoaded = await finalStore.load();
  stores.close(finalStore);
  const final = foldJournal(finalStore.location, finalLoaded);
  return {
    ...atCrash,
    resumed,
    finalLoaded,
    final,
    messages: final.context.messages,
    stillWaiting: final.state === 'awaitingDecision',
    cancelledInTurn: final.state === 'cancelled' && final.context.pending.length > 0,
    decisions: reconcileDecisions(resumed.events, scenario.takeUps ? new Set(atCrash.openCalls.map((call) => call.id)) : null),
    cancelledAtOnce: resumed.result?.status === 'cancelled' && !resumed.events.some((event) => event.type === 'resumed'),
  };
}

function noCallRanBeforeItsDecision({ scenario, world, decided }: AtCrash): void {
  for (const id of Object.keys(scenario.decisions)) if (!decided.has(id)) expect(world.attempts.of(id), `runs of ${id} before its decision`).toBe(0);
}

/** The run's own resume then goes on (after the check). */
async function anotherCommandIsRefused({ scenario, key, world, stores, loaded, attempts }: AtCrash): Promise<void> {
  const refused = await resumeScenarioAs(scenario, key, world, stores, 'another-command');
  expect(refused).toBeInstanceOf(RunOriginMismatchError);
  const afterRefusalStore = stores.open(key);
  const afterRefusal = await afterRefusalStore.load();
  stores.close(afterRefusalStore);
  expect(afterRefusal.records.map((r) => r.record)).toEqual(loaded.records.map((r) => r.record));
  expect(world.attempts.runs).toEqual(attempts);
}

/** Its resume is refused, nothing written, nothing run. */
async function aCancelledRunStaysCancelled({ scenario, key, world, stores, loaded, attempts, uninterrupted }: AtCrash): Promise<void> {
  expect(await resumeScenarioAs(scenario, key, world, stores, API_COMMAND)).toBeInstanceOf(RunCancelledError);
  expect((await reload(stores, key)).records.map((r) => r.record)).toEqual(loaded.records.map((r) => r.record));
  expect(world.attempts.runs).toEqual(attempts);
  expect(uninterrupted.status).toBe('cancelled');
}

/**
 * Every tool_use answered once, in the next message, results first (but for the turn a run
 * stopped in to wait for a decision, or was cancelled in: its results are in the ledger).
 */
function everyToolUseAnsweredOnce({ messages, stillWaiting, cancelledInTurn, resumed }: AfterResume): void {
  expect(toolUseProblems(stillWaiting || cancelledInTurn ? messages.slice(0, -1) : messages)).toEqual([]);
  if (stillWaiting) expect(resumed.result?.status).toBe('waiting');
}

function noSideEffectTwice({ world }: AfterResume): void {
  for (const [id, runs] of world.effects.runs) expect(runs, `effects of ${id}`).toBeLessThanOrEqual(1);
}

/** A cancel waiting when the resume began applies first, and nothing of the open turn runs. */
function eachOpenCallTookItsBranch(facts: AfterResume): void {
  const { decisions, cancelledAtOnce, world, attempts, openCalls, view, effects, stillWaiting, cancelledInTurn, final, messages } = facts;
  if (cancelledAtOnce) {
    expect([...decisions.keys()]).toEqual([]);
    expect(world.attempts.runs).toEqual(attempts);
  } else expect([...decisions.keys()]).toEqual(openCalls.map((call) => call.id));
  for (const call of cancelledAtOnce ? [] : openCalls) {
    const recorded: ToolOutcome | undefined = view.ledger.get(call.id);
    const ranOnResume = world.attempts.of(call.id) - (attempts.get(call.id) ?? 0);
    // A turn still waiting for a decision (or cancelled in its course) has its results in the ledger, not in messages.
    const result = stillWaiting || cancelledInTurn ? final.ledger.get(call.id) : toolResultOf(messages, call.id);
    if (recorded) {
      expect(decisions.get(call.id)).toBe('reused');
      expect(result?.content).toEqual(recorded.content);
      expect(ranOnResume).toBe(0);
    } else if (READ_ONLY_TOOLS.has(call.name)) {
      expect(decisions.get(call.id)).toBe('re-ran-read-only');
      expect(ranOnResume).toBe(1);
    } else if (call.name === 'charge_card') {
      const happened = (effects.get(call.id) ?? 0) > 0;
      expect(decisions.get(call.id)).toBe(happened ? 'verified-done' : 'verified-not-done-ran');
      expect(ranOnResume).toBe(happened ? 0 : 1);
    } else {
      expect(decisions.get(call.id)).toBe('unknown-reported');
      expect(result).toMatchObject({ is_error: true });
      expect(String(result?.content)).toContain('is unknown');
      expect(ranOnResume).toBe(0);
    }
  }
}

function aDeniedCallNeverRuns({ scenario, world, final }: AfterResume): void {
  for (const [id, reply] of Object.entries(scenario.decisions)) {
    if (reply.verdict === 'approved') continue;
    expect(world.attempts.of(id), `runs of ${id}, ${reply.verdict}`).toBe(0);
    // Its outcome is the decision's, recorded once.
    if (final.ledger.has(id)) expect(final.ledger.get(id)!.kind, id).toBe(reply.verdict);
  }
}

/** The decisions the journal records (a snapshot record restates the turn's: not new ones). */
function recordedDecisions(records: readonly StoredRecord[]): Decision[] {
  return records.filter((r) => !r.record.snapshot).flatMap((r) => r.record.decisions?.add ?? []);
}

/** Every call of the scenario that needs an approval (publish does); a reply may hold a block that is none (null). */
function approvalCalls(scenario: Scenario): string[] {
  return scenario.replies.flatMap((reply) => reply.content.flatMap((block) => (block?.type === 'tool_use' && block.name === 'publish' ? [block.id as string] : [])));
}

/**
 * A call that needs an approval runs only once one is recorded for that very call, and each
 * decision recorded is the one given for its call: never the approval of another call of the same
 * tool with the same input, nor a call undecided or denied taken for approved.
 */
function anApprovalRunsOnlyItsCall(facts: AtCrash | AfterResume): void {
  const { scenario, world } = facts;
  const records = 'finalLoaded' in facts ? facts.finalLoaded.records : facts.loaded.records;
  const decided = recordedDecisions(records);
  for (const decision of decided) expect(decision.verdict, `the decision recorded for ${decision.tool_use_id}`).toBe(scenario.decisions[decision.tool_use_id]?.verdict);
  for (const id of approvalCalls(scenario)) {
    if (world.attempts.of(id) === 0) continue;
    expect(decided.filter((decision) => decision.tool_use_id === id).map((decision) => decision.verdict), `${id} ran: on its own approval`).toEqual(['approved']);
  }
}

/**
 * A run started where another run waited for a call of the same id, approved in that run's inbox:
 * the approval is never recorded in this run, and stays with the other run where a fresh start
 * moved it (never lost, never taken).
 */
async function aDecisionStaysWithItsRun(facts: AtCrash | AfterResume): Promise<void> {
  const { scenario, stores, key } = facts;
  const other = scenario.anotherRunFirst;
  if (!other) return;
  const records = 'finalLoaded' in facts ? facts.finalLoaded.records : facts.loaded.records;
  expect(recordedDecisions(records).filter((decision) => decision.by === OTHER_RUN_DECIDER), `the other run's decision about ${other.tool_use_id}, in this run`).toEqual([]);
  if (!stores.archivedDecisions) return;
  const kept = (await stores.archivedDecisions(key)).filter((decision) => decision.by === OTHER_RUN_DECIDER);
  expect(kept.map((decision) => [decision.tool_use_id, decision.verdict]), "the other run's decision, kept with it").toEqual([[other.tool_use_id, 'approved']]);
}

/**
 * The decision a person wrote to the run's inbox as the run was forked at the call's wait is
 * recorded by exactly one of the two runs: the parent, whose inbox it is; the child, resumed,
 * waits for a decision of its own about its copy of the call, and runs nothing of it.
 */
async function aForkedDecisionGoesToOneSide({ scenario, stores, key, world }: AfterResume): Promise<void> {
  const forkAt = scenario.forkAt;
  if (!forkAt) return;
  const childKey = forkKeyOf(stores, key);
  const opened = stores.open(childKey);
  const forked = await opened.exists();
  stores.close(opened);
  expect(forked, 'the fork was made').toBe(true);
  const attempts = world.attempts.of(forkAt.tool_use_id);
  const child = stores.open(childKey);
  let waiting: string[];
  try {
    const result = await resumeRun({ store: child, model: scriptedModel([endTurnReply(FINISH_TEXT)]), tools: scenarioTools(scenario, world), allowQuestions: true, wait: false });
    waiting = (result.waiting ?? []).filter((call) => call.awaited).map((call) => call.tool_use_id);
  } finally {
    stores.close(child);
  }
  const byPerson = (records: readonly StoredRecord[]) => recordedDecisions(records).filter((decision) => decision.by === FORK_DECIDER && decision.tool_use_id === forkAt.tool_use_id).length;
  const inParent = byPerson((await reload(stores, key)).records);
  const inChild = byPerson((await reload(stores, childKey)).records);
  expect({ inParent, inChild }, `the decision about ${forkAt.tool_use_id} written as the run was forked`).toEqual({ inParent: 1, inChild: 0 });
  expect(waiting, 'the child waits for its own decision').toEqual([forkAt.tool_use_id]);
  expect(world.attempts.of(forkAt.tool_use_id) - attempts, `runs of ${forkAt.tool_use_id} in the child`).toBe(0);
}

function eachCallDecidedOnce({ decided, world, asked, finalLoaded }: AfterResume): void {
  for (const id of decided) expect((world.asked.get(id) ?? 0) - (asked.get(id) ?? 0), `asked again about ${id}`).toBe(0);
  const finalRecords = finalLoaded.records;
  // A snapshot record restates every decision of the turn (its lists start at 0): not a new one.
  const decidedIds = finalRecords.filter((r) => !r.record.snapshot).flatMap((r) => (r.record.decisions?.add ?? []).map((d) => d.tool_use_id));
  expect(decidedIds).toEqual([...new Set(decidedIds)]);
}

/**
 * Where every open call's result was recorded (or could be recomputed), the run ends exactly as
 * the uninterrupted one (a crash after its final record: as the uninterrupted one resumed). A reply
 * lost by the crash (its tokens counted as it arrived, before checkpoint A) still counts against
 * the budget: where they reach it, the resume stops there, before the uninterrupted run did (which
 * may have been cancelled at a later step), asking nothing more.
 */
function endsAsTheUninterruptedRun(facts: AfterResume): void {
  const { resumed, baseline, messages, decisions } = facts;
  const stoppedAtLostReply = lostReplyStop(facts);
  expect(resumed.result?.status).toBe(stoppedAtLostReply ? 'stoppedAtBudget' : baseline.status);
  if (stoppedAtLostReply) {
    expect(messages).toEqual(baseline.messages.slice(0, messages.length));
    expect(resumed.events.filter((event) => event.type === 'model-call')).toEqual([]);
  } else if ([...decisions.values()].every((d) => d === 'reused' || d === 're-ran-read-only')) {
    expect(messages).toEqual(baseline.messages);
  }
}

/** The crash lost a reply whose tokens (counted as it arrived) reach the budget: the resume stops before the call. */
function lostReplyStop({ crash, view }: Pick<AtCrash, 'crash' | 'view'>): boolean {
  const asksModelNext = announcedEffectOf(view.state, view.context) === 'requestModelReply';
  return crash.label.startsWith('after-model-reply:') && asksModelNext && budgetStopOf(view.context) !== null;
}

async function reload(stores: ScenarioStores, key: string) {
  const store = stores.open(key);
  try {
    return await store.load();
  } finally {
    stores.close(store);
  }
}

/**
 * How the resume settled each call it found open. With processes of the scenario after it: the
 * first settling of each call (a later process finds one it settled in the ledger), and of a
 * later process's, only those the crash left open (a kill leaves its own to the process after it).
 */
function reconcileDecisions(events: RunEvent[], openCalls: ReadonlySet<string> | null): Map<string, string> {
  const decisions = new Map<string, string>();
  const resumes = events.flatMap((event, index) => (event.type === 'resumed' ? [index] : []));
  for (const [index, event] of events.entries()) {
    if (event.type !== 'reconciled' || decisions.has(event.call.id)) continue;
    // The crash's own resume settles no call but those it left open; a later process settles what a kill left open.
    if (openCalls && !openCalls.has(event.call.id) && index > (resumes[1] ?? Infinity)) continue;
    decisions.set(event.call.id, event.decision);
  }
  return decisions;
}
