/**
 * The crash suite of awaits, for any store: each kind of await's one path through the machine
 * (walks/await-kinds.ts), a kill at every crash point it passes, a resume from the store alone,
 * and the invariants. Each invariant is a pure function of what the run left (the journal, the
 * inboxes, the world) returning its problems, so a test can hand it a corrupted journal or the
 * facts of a deliberately broken runtime and see it fail.
 */
import type { ContentBlock, Decision, Message } from '../../machines/agent-loop.types.ts';
import { waitPlanOf } from '../../src/awaits/wait-tool.ts';
import { childRunIdOf } from '../../src/runtime/run-tree.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import type { Signal } from '../../src/store/inbox/signal-inbox.ts';
import type { JournalRecord } from '../../src/store/journal/journal-record.ts';
import { toolUseProblems } from '../helpers/messages.ts';
import { type CrashPath, describeStep, describeTrace, generateCrashPaths } from './crash-paths.ts';
import { type AwaitPlayed, newAwaitWorld, playAwaits, SIGNAL_TAKE, type StoreHook } from './await-runner.ts';
import type { ScenarioStores } from './scenario-runner.ts';
import { AWAIT_KINDS, type AwaitKind, GIVERS, type Given } from './walks/await-kinds.ts';

export interface AwaitPath {
  kind: AwaitKind;
  path: CrashPath;
}

/** Each kind's path through the machine to the end of the run (its walk offers one way only). */
export function awaitPaths(kinds: readonly AwaitKind[] = AWAIT_KINDS): AwaitPath[] {
  return kinds.map((kind) => {
    const ended = generateCrashPaths([['simple', 1, 1, { awaitKind: kind }]]).paths.filter((path) => path.steps.at(-1)!.to === 'done');
    if (ended.length !== 1) throw new Error(`the walk of "${kind.name}" should reach the end of the run one way, not ${ended.length}`);
    return { kind, path: ended[0]! };
  });
}

export interface AwaitCase {
  name: string;
  kind: AwaitKind;
  path: CrashPath;
  stepIndex: number;
  label: string;
}

/**
 * A kill at every crash label of each path: the runtime's, and for a kind whose waits end by a
 * signal, right after each take (during the step that records the wait's decision).
 */
export function awaitCases(paths: readonly AwaitPath[]): AwaitCase[] {
  return paths.flatMap(({ kind, path }) => {
    const decisionSteps = path.steps.flatMap((step, index) => (step.event.type === 'DECISION' ? [index] : []));
    return path.steps.flatMap((step, stepIndex) => {
      const takes = kind.endedBy === 'signal' && step.event.type === 'DECISION' ? [`after-${SIGNAL_TAKE}:${decisionSteps.indexOf(stepIndex) + 1}`] : [];
      return [...takes, ...step.labels].map((label) => ({ name: `${kind.name}: ${describeStep(step)} ✂ ${label}`, kind, path, stepIndex, label }));
    });
  });
}

export interface AwaitBaseline {
  status: string;
  messages: Message[];
  passed: string[];
  takes: number;
}

/** Each kind played without a kill, once: what every killed-and-resumed run is held to. */
export class AwaitBaselines {
  private readonly cache = new Map<string, Promise<AwaitBaseline>>();
  constructor(
    private readonly stores: ScenarioStores,
    private readonly freshKey: () => string,
  ) {}

  of({ kind, path }: Pick<AwaitCase, 'kind' | 'path'>): Promise<AwaitBaseline> {
    let baseline = this.cache.get(kind.name);
    if (!baseline) {
      baseline = (async () => {
        const key = this.freshKey();
        const played = await playAwaits(path, kind, this.stores, key, newAwaitWorld(), { opening: 'start' });
        const { view } = await readRun(this.stores, key, kind);
        return { status: played.result?.status ?? 'killed', messages: view.context.messages, passed: played.passed, takes: played.takes };
      })();
      this.cache.set(kind.name, baseline);
    }
    return baseline;
  }
}

/** What a run killed at a crash label and resumed left: what the invariants read. */
export interface AwaitFacts {
  kind: AwaitKind;
  status: string | null;
  messages: Message[];
  baselineMessages: Message[];
  /** The journal as the kill left it, and at the end. */
  atCrash: JournalRecord[];
  final: JournalRecord[];
  given: Given[];
  waitedAgain: string[];
  waitingSince: Array<{ call: string; since: number }>;
  /** Side effects that took place, and every start of a tool's run, by call. */
  effects: Map<string, number>;
  attempts: Map<string, number>;
  /** Decisions still in the run's inbox (given, not settled), and signals no wait took. */
  inboxLeft: Decision[];
  signalsLeft: Signal[];
  /** The signal each call's wait took, as the store binds it. */
  takenBy: Map<string, Signal | null>;
  /** The run's key, and the child runs it queued (a kind of a fleet's; null for the others). */
  key: string;
  queued: string[] | null;
}

async function readRun(stores: ScenarioStores, key: string, kind: AwaitKind) {
  const store = stores.open(key);
  try {
    const loaded = await store.load();
    const takenBy = new Map<string, Signal | null>();
    for (const call of kind.calls) takenBy.set(call.id, (await store.signals?.takenBy(call.id)) ?? null);
    return {
      records: loaded.records.map((stored) => stored.record),
      view: foldJournal(store.location, loaded),
      inboxLeft: ((await store.decisions?.read()) ?? []) as Decision[],
      signalsLeft: (await store.signals?.waiting()) ?? [],
      takenBy,
    };
  } finally {
    stores.close(store);
  }
}

/** Kills the run at the case's label, resumes it from the store alone, and gathers what the invariants read. */
export async function awaitFactsAfterCrash(crash: AwaitCase, stores: ScenarioStores, baselines: AwaitBaselines, key: string, hook?: StoreHook): Promise<AwaitFacts> {
  const baseline = await baselines.of(crash);
  const world = newAwaitWorld();
  const killed: AwaitPlayed = await playAwaits(crash.path, crash.kind, stores, key, world, { opening: 'start', crashAfter: crash.label, hook });
  if (killed.crashedAt !== crash.label) throw new Error(`the run was to be killed at ${crash.label}, and ended ${killed.result?.status ?? 'killed'} at ${killed.crashedAt ?? 'no crash point'}`);
  const atCrash = (await readRun(stores, key, crash.kind)).records;
  const resumed = await playAwaits(crash.path, crash.kind, stores, key, world, { opening: 'resume', hook });
  const end = await readRun(stores, key, crash.kind);
  return {
    kind: crash.kind,
    status: resumed.result?.status ?? null,
    messages: end.view.context.messages,
    baselineMessages: baseline.messages,
    atCrash,
    final: end.records,
    given: world.given,
    waitedAgain: world.waitedAgain,
    waitingSince: world.waitingSince,
    effects: new Map(world.effects.runs),
    attempts: new Map(world.attempts.runs),
    inboxLeft: end.inboxLeft,
    signalsLeft: end.signalsLeft,
    takenBy: end.takenBy,
    key,
    queued: (await crash.kind.fleet?.queued(key)) ?? null,
  };
}

// ─── The invariants ────────────────────────────────────────────────────────────────────────────

/** What a message says, times aside: a signal's and the clock's times differ from run to run, and a late resume says how late. */
export function withoutTimes(messages: readonly Message[]): unknown {
  const text = JSON.stringify(messages)
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, '<time>')
    .replace(/ The run was stopped meanwhile and goes on [^.]*? later, at <time>\./g, '');
  return JSON.parse(text) as unknown;
}

/** A call's tool_result in the conversation. */
function resultOf(messages: readonly Message[], id: string): ContentBlock | undefined {
  return messages.flatMap((message) => (typeof message.content === 'string' ? [] : message.content)).find((block) => block.type === 'tool_result' && block.tool_use_id === id);
}

/**
 * The approved calls a resume reported unknown: a side effect that cannot be checked, approved
 * (its DECISION record durable) and killed before its ledger entry, may have taken place, and is
 * not run again (the reconcile rule of such calls, as after checkpoint A).
 */
function reportedUnknown(facts: AwaitFacts): string[] {
  return facts.kind.calls.flatMap((call) => {
    const result = resultOf(facts.messages, call.id);
    return result?.is_error === true && String(result.content).includes('is unknown') ? [call.id] : [];
  });
}

/**
 * Nothing lost: the run ends, with the conversation of the run never killed (times aside), but
 * for an approved call killed after its approval and before its ledger entry, whose result says
 * it is unknown (and only there).
 */
export function nothingLost(facts: AwaitFacts): string[] {
  const problems: string[] = [];
  if (facts.status !== 'done') problems.push(`the resumed run ended ${facts.status ?? 'killed'}, not done`);
  const unknown = reportedUnknown(facts);
  for (const id of unknown) {
    const approved = decisionsFor(facts.atCrash, id).some((decision) => decision.verdict === 'approved');
    const recorded = written(facts.atCrash).some((record) => record.results?.add.some((outcome) => outcome.tool_use_id === id));
    if (!approved || recorded) problems.push(`${id} was reported unknown, though the kill left it ${approved ? 'recorded' : 'not approved yet'}`);
  }
  // Where a call is reported unknown, the run never killed has its result: the rest must be the same.
  const expected = facts.baselineMessages.map((message) =>
    typeof message.content === 'string' ? message : { ...message, content: message.content.map((block) => (block.type === 'tool_result' && unknown.includes(block.tool_use_id as string) ? resultOf(facts.messages, block.tool_use_id as string)! : block)) },
  );
  if (JSON.stringify(withoutTimes(facts.messages)) !== JSON.stringify(withoutTimes(expected))) {
    problems.push(`the conversation differs from the run never killed:\n  got      ${JSON.stringify(withoutTimes(facts.messages))}\n  expected ${JSON.stringify(withoutTimes(expected))}`);
  }
  return problems;
}

/** No side effect twice; an approved call's once (at most, where reported unknown), a call not approved never started. */
export function noSideEffectTwice(facts: AwaitFacts): string[] {
  const problems: string[] = [];
  for (const [id, runs] of facts.effects) if (runs > 1) problems.push(`the side effect of ${id} took place ${runs} times`);
  const unknown = reportedUnknown(facts);
  for (const call of facts.kind.calls) {
    if (call.needs !== 'approval') continue;
    const runs = facts.effects.get(call.id) ?? 0;
    if (facts.kind.verdict === 'approved' && runs !== 1 && !unknown.includes(call.id)) problems.push(`${call.id} was approved and its effect took place ${runs} times, not once`);
    if (facts.kind.verdict !== 'approved' && (facts.attempts.get(call.id) ?? 0) > 0) problems.push(`${call.id} was ${facts.kind.verdict} and ran`);
  }
  return problems;
}

/** Every tool_use paired with one tool_result, in the next message. */
export function everyToolUsePaired(facts: AwaitFacts): string[] {
  return toolUseProblems(facts.messages);
}

/** The records a journal wrote as they came (a snapshot record restates what came before: not a new one). */
function written(records: readonly JournalRecord[]): JournalRecord[] {
  return records.filter((record) => !record.snapshot);
}

function decisionsFor(records: readonly JournalRecord[], id: string): Decision[] {
  return written(records).flatMap((record) => (record.decisions?.add ?? []).filter((decision) => decision.tool_use_id === id));
}

/**
 * Each await's decision recorded exactly once, and it is what the world gave that call: the
 * person's decision as written, the signal sent for that call (by its id), the clock where the
 * clock ends it.
 */
export function eachAwaitDecidedOnce(facts: AwaitFacts): string[] {
  const problems: string[] = [];
  for (const call of facts.kind.calls) {
    const recorded = decisionsFor(facts.final, call.id);
    if (recorded.length !== 1) {
      problems.push(`${call.id}: ${recorded.length} decisions recorded, not one`);
      continue;
    }
    const decision = recorded[0]!;
    const given = facts.given.filter((entry) => entry.call === call.id);
    if (given.length > 1) problems.push(`${call.id}: the world gave its decision ${given.length} times`);
    const gave = given[0];
    if (decision.verdict !== facts.kind.verdict) problems.push(`${call.id}: recorded ${decision.verdict}, not ${facts.kind.verdict}`);
    const endedBy = (Object.keys(GIVERS) as Array<Given['by']>).find((by) => GIVERS[by].ended(decision));
    if (endedBy !== facts.kind.endedBy) problems.push(`${call.id}: ended by the ${endedBy ?? 'nobody known'}, not by the ${facts.kind.endedBy}`);
    const differs = gave ? (GIVERS[gave.by].differs as (decision: Decision, given: Given) => string | null)(decision, gave) : null;
    if (differs) problems.push(`${call.id}: ${differs}`);
    // The clock needs no one: a resume that comes after the deadline (a slow machine) finds it passed.
    if (!gave && facts.kind.endedBy !== 'clock') problems.push(`${call.id}: decided (${decision.by}) though the world gave it nothing`);
  }
  return problems;
}

/**
 * Never taken twice: the run never waits again for a call the world gave what ends it; the inbox
 * holds no decision once recorded (settled once); a signal is taken by one call only (sent again
 * with its id, it delivers nothing; none is left untaken; the call the store binds it to is the
 * call whose decision names it).
 */
export function neverTakenTwice(facts: AwaitFacts): string[] {
  const problems: string[] = [];
  for (const id of facts.waitedAgain) problems.push(`the run waited again for ${id}, after the world gave what ends it`);
  for (const decision of facts.inboxLeft) {
    if (decisionsFor(facts.final, decision.tool_use_id).length === 0) problems.push(`the inbox holds a decision about ${decision.tool_use_id} (${decision.verdict}) that the run never took`);
  }
  for (const signal of facts.signalsLeft) problems.push(`signal ${signal.name} ${signal.id ?? '(no id)'} was never taken`);
  const signalled = facts.kind.calls.flatMap((call) => decisionsFor(facts.final, call.id)).filter((decision) => decision.signal);
  const ids = signalled.map((decision) => decision.signal!.id);
  if (new Set(ids).size !== ids.length) problems.push(`one signal ended two waits: ${ids.join(', ')}`);
  for (const decision of signalled) {
    const bound = facts.takenBy.get(decision.tool_use_id);
    if (bound?.id !== decision.signal!.id) problems.push(`${decision.tool_use_id} recorded signal ${decision.signal!.id}, but the store bound ${bound?.id ?? 'none'} to it`);
  }
  for (const given of facts.given) {
    if (given.by === 'signal' && given.again.outcome === 'delivered') problems.push(`signal ${given.signal.id} sent again was delivered a second time`);
  }
  return problems;
}

/**
 * The deadline is the journal's, never restarted by a resume: each call began to wait once (one
 * DECISION_NEEDED record), at the time the kill left in the journal if it was there; every process
 * said it waits from that time; a wait the clock ended ends at that time plus the input's, one a
 * signal ended took a signal sent before it.
 */
export function deadlineKept(facts: AwaitFacts): string[] {
  const problems: string[] = [];
  const began = (records: readonly JournalRecord[], id: string) =>
    written(records).flatMap((record) => (record.event === 'DECISION_NEEDED' && record.awaiting?.tool_use_id === id ? [record.awaiting.since] : []));
  for (const call of facts.kind.calls) {
    const since = began(facts.final, call.id);
    if (since.length !== 1) {
      problems.push(`${call.id} began to wait ${since.length} times (DECISION_NEEDED records at ${since.join(', ')}), not once`);
      continue;
    }
    const [at] = since as [number];
    const before = began(facts.atCrash, call.id);
    if (before.length > 0 && before[0] !== at) problems.push(`${call.id} waited from ${before[0]} when killed, and from ${at} after the resume`);
    for (const said of facts.waitingSince.filter((entry) => entry.call === call.id)) {
      if (said.since !== at) problems.push(`a process said ${call.id} waits from ${said.since}, not from ${at} (its DECISION_NEEDED record)`);
    }
    if (call.needs !== 'wait') continue;
    const wakeAt = waitPlanOf(call.input, at)!.wakeAt;
    for (const decision of decisionsFor(facts.final, call.id)) {
      if (decision.by === 'clock' && decision.at !== wakeAt) problems.push(`${call.id} ended by the clock at ${decision.at}, not at its deadline ${wakeAt} (${at} + the input's time)`);
      if (decision.signal && wakeAt !== null && decision.signal.sentAt >= wakeAt) problems.push(`${call.id} took signal ${decision.signal.id}, sent after its deadline`);
    }
  }
  return problems;
}

/** An inbox decision is settled once the run recorded it: none is left in the inbox for a call decided in the journal. */
export function inboxSettled(facts: AwaitFacts): string[] {
  return facts.inboxLeft.filter((decision) => decisionsFor(facts.final, decision.tool_use_id).length > 0).map((decision) => `the inbox still holds the decision about ${decision.tool_use_id} (${decision.verdict}), recorded already`);
}

/**
 * A child run per call that waits for one, queued once under the id derived from the run and the
 * call (`<run>.<tool_use_id>`), and nothing else queued; the child's own side effects each once.
 */
export function childQueuedOnce(facts: AwaitFacts): string[] {
  const { fleet } = facts.kind;
  if (!fleet) return [];
  const problems: string[] = [];
  const derived = facts.kind.calls.filter((call) => call.needs === 'child').map((call) => childRunIdOf(facts.key, call.id));
  if (JSON.stringify(facts.queued) !== JSON.stringify(derived)) problems.push(`the run queued ${JSON.stringify(facts.queued)}, not ${JSON.stringify(derived)}`);
  for (const id of fleet.childEffects) {
    const runs = facts.effects.get(id) ?? 0;
    if (runs !== 1) problems.push(`the child's side effect ${id} took place ${runs} times, not once`);
  }
  return problems;
}

export const AWAIT_INVARIANTS = { nothingLost, noSideEffectTwice, everyToolUsePaired, eachAwaitDecidedOnce, neverTakenTwice, inboxSettled, deadlineKept, childQueuedOnce } as const;

/** Every invariant's problems, each said with its invariant's name. */
export function awaitProblems(facts: AwaitFacts): string[] {
  return Object.entries(AWAIT_INVARIANTS).flatMap(([name, check]) => check(facts).map((problem) => `${name}: ${problem}`));
}

/** The trace of the case's path, for a failing test. */
export function describeAwaitCase(crash: AwaitCase, stores: ScenarioStores): string {
  return `${crash.kind.name} on the ${stores.name}, killed at ${crash.label}:\n${describeTrace(crash.path, crash.stepIndex, crash.label)}`;
}
