/**
 * One crash-and-resume check of a generated path at one crash label, for any store: crash the
 * real runtime there, resume from the store alone, and hold the result to the invariants.
 */
import { expect } from 'vitest';
import { announcedEffectOf } from '../../machines/agent-loop.effects.ts';
import { awaitsDecision, budgetStopOf } from '../../machines/agent-loop.logic.ts';
import type { Message, ToolOutcome } from '../../machines/agent-loop.types.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { RunCancelledError } from '../../src/control/control-request.ts';
import { API_COMMAND, RunOriginMismatchError } from '../../src/runtime/run-origin.ts';
import { foldJournal } from '../../src/store/fold-journal.ts';
import { toolResultOf, toolUseProblems } from '../helpers/messages.ts';
import { type CrashPath, describeStep, describeTrace } from './crash-paths.ts';
import { newWorld, playScenario, READ_ONLY_TOOLS, resumeScenario, resumeScenarioAs, type ScenarioStores } from './scenario-runner.ts';

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
        const resumed = await resumeScenario(crashPath.scenario, key, world, this.stores);
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

async function checkCrashInvariants(crash: CrashCase, stores: ScenarioStores, baselines: Baselines, key: string): Promise<void> {
  const { scenario, steps } = crash.path;
  const crashedAfterTheEnd = crash.stepIndex === steps.length - 1 && crash.label === steps[crash.stepIndex]!.labels.at(-1);
  const uninterrupted = await baselines.of(crash.path);
  const baseline = crashedAfterTheEnd && uninterrupted.status === 'failed' ? await baselines.resumedAfterTheEnd(crash.path) : uninterrupted;
  const world = newWorld();

  const crashed = await playScenario(scenario, key, world, stores, crash.label);
  expect(crashed.crashedAt).toBe(crash.label);
  if (crash.powerLoss) {
    const before = await reload(stores, key);
    expect(stores.loseUnsynced!(key), 'bytes written without an fsync').toBeGreaterThan(0);
    // The turn's last ledger entry (and its unit) is gone with the power: the run stands at the record before it.
    expect((await reload(stores, key)).records.length).toBe(before.records.length - crash.powerLoss);
  }

  // 4. A crash at a transition boundary leaves a store that loads, with nothing cut off.
  const atCrashStore = stores.open(key);
  const loaded = await atCrashStore.load();
  stores.close(atCrashStore);
  expect(loaded.tornTail).toBeNull();
  const atCrash = foldJournal(atCrashStore.location, loaded);
  const attemptsAtCrash = new Map(world.attempts.runs);
  const effectsAtCrash = new Map(world.effects.runs);
  const openTurn = atCrash.state === 'pendingTool' || atCrash.state === 'effectRecorded';
  // Reconcile settles the turn's calls up to the first that waits for a decision: that one and the rest never started.
  const firstUndecided = atCrash.context.pending.findIndex((call) => !atCrash.ledger.has(call.id) && awaitsDecision(atCrash.context, call));
  const openCalls = openTurn ? atCrash.context.pending.slice(0, firstUndecided === -1 ? undefined : firstUndecided) : [];
  const decidedAtCrash = new Set(loaded.records.flatMap((r) => (r.record.decisions?.add ?? []).map((d) => d.tool_use_id)));
  const askedAtCrash = new Map(world.asked);
  // 7. A call that needs a decision never ran before its decision was durable.
  for (const id of Object.keys(scenario.decisions)) if (!decidedAtCrash.has(id)) expect(world.attempts.of(id), `runs of ${id} before its decision`).toBe(0);

  // 6. A resume by another command is refused, with nothing written and nothing run; the run's own resume then goes on (below).
  const refused = await resumeScenarioAs(scenario, key, world, stores, 'another-command');
  expect(refused).toBeInstanceOf(RunOriginMismatchError);
  const afterRefusalStore = stores.open(key);
  const afterRefusal = await afterRefusalStore.load();
  stores.close(afterRefusalStore);
  expect(afterRefusal.records.map((r) => r.record)).toEqual(loaded.records.map((r) => r.record));
  expect(world.attempts.runs).toEqual(attemptsAtCrash);

  // A run cancelled before the crash: its resume is refused, nothing written, nothing run.
  if (atCrash.state === 'cancelled') {
    expect(await resumeScenarioAs(scenario, key, world, stores, API_COMMAND)).toBeInstanceOf(RunCancelledError);
    expect((await reload(stores, key)).records.map((r) => r.record)).toEqual(loaded.records.map((r) => r.record));
    expect(world.attempts.runs).toEqual(attemptsAtCrash);
    expect(uninterrupted.status).toBe('cancelled');
    return;
  }

  const resumed = await resumeScenario(scenario, key, world, stores);
  const finalStore = stores.open(key);
  const final = foldJournal(finalStore.location, await finalStore.load());
  stores.close(finalStore);
  const messages = final.context.messages;

  // 1. Valid for the Messages API: every tool_use answered once, in the next message, results first
  //    (but for the turn a run stopped in to wait for a decision: its results come once decided).
  const stillWaiting = final.state === 'awaitingDecision';
  // A run cancelled inside a turn ends with that turn's tool_use message, its results never sent.
  const cancelledInTurn = final.state === 'cancelled' && final.context.pending.length > 0;
  expect(toolUseProblems(stillWaiting || cancelledInTurn ? messages.slice(0, -1) : messages)).toEqual([]);
  if (stillWaiting) expect(resumed.result?.status).toBe('waiting');

  // 2. No side effect took place twice for one tool_use_id.
  for (const [id, runs] of world.effects.runs) expect(runs, `effects of ${id}`).toBeLessThanOrEqual(1);

  // 3. Each call left open by the crash was settled by the right branch; a cancel waiting when the
  //    resume began applies first, and nothing of the open turn runs.
  const decisions = reconcileDecisions(resumed.events);
  const cancelledAtOnce = resumed.result?.status === 'cancelled' && !resumed.events.some((event) => event.type === 'resumed');
  if (cancelledAtOnce) {
    expect([...decisions.keys()]).toEqual([]);
    expect(world.attempts.runs).toEqual(attemptsAtCrash);
  } else expect([...decisions.keys()]).toEqual(openCalls.map((call) => call.id));
  for (const call of cancelledAtOnce ? [] : openCalls) {
    const recorded: ToolOutcome | undefined = atCrash.ledger.get(call.id);
    const ranOnResume = world.attempts.of(call.id) - (attemptsAtCrash.get(call.id) ?? 0);
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
      const happened = (effectsAtCrash.get(call.id) ?? 0) > 0;
      expect(decisions.get(call.id)).toBe(happened ? 'verified-done' : 'verified-not-done-ran');
      expect(ranOnResume).toBe(happened ? 0 : 1);
    } else {
      expect(decisions.get(call.id)).toBe('unknown-reported');
      expect(result).toMatchObject({ is_error: true });
      expect(String(result?.content)).toContain('is unknown');
      expect(ranOnResume).toBe(0);
    }
  }

  // 8. A decided call is never asked again, and every call is decided once.
  for (const id of decidedAtCrash) expect((world.asked.get(id) ?? 0) - (askedAtCrash.get(id) ?? 0), `asked again about ${id}`).toBe(0);
  const finalRecords = (await reload(stores, key)).records;
  // A snapshot record restates every decision of the turn (its lists start at 0): not a new one.
  const decidedIds = finalRecords.filter((r) => !r.record.snapshot).flatMap((r) => (r.record.decisions?.add ?? []).map((d) => d.tool_use_id));
  expect(decidedIds).toEqual([...new Set(decidedIds)]);

  // 9. A reply lost by the crash (its tokens counted as it arrived, before checkpoint A) still counts
  //    against the budget: where they reach it, the resume stops there, before the uninterrupted run
  //    did (which may have been cancelled at a later step), asking nothing more.
  const asksModelNext = announcedEffectOf(atCrash.state, atCrash.context) === 'requestModelReply';
  const lostReplyStop = crash.label.startsWith('after-model-reply:') && asksModelNext && budgetStopOf(atCrash.context) !== null;
  // 5. Where every open call's result was recorded (or could be recomputed), the run ends exactly as the uninterrupted one
  //    (a crash after its final record: as the uninterrupted one resumed).
  expect(resumed.result?.status).toBe(lostReplyStop ? 'stoppedAtBudget' : baseline.status);
  if (lostReplyStop) {
    expect(messages).toEqual(baseline.messages.slice(0, messages.length));
    expect(resumed.events.filter((event) => event.type === 'model-call')).toEqual([]);
  } else if ([...decisions.values()].every((d) => d === 'reused' || d === 're-ran-read-only')) {
    expect(messages).toEqual(baseline.messages);
  }
}

async function reload(stores: ScenarioStores, key: string) {
  const store = stores.open(key);
  try {
    return await store.load();
  } finally {
    stores.close(store);
  }
}

function reconcileDecisions(events: RunEvent[]): Map<string, string> {
  const decisions = new Map<string, string>();
  for (const event of events) if (event.type === 'reconciled') decisions.set(event.call.id, event.decision);
  return decisions;
}
