/**
 * A crash drill of a user's agent: its path is played once on scripted replies, then, for every
 * crash point of that path, played again in a fresh scratch folder, stopped right there as a kill
 * would stop it, and resumed; the user's tools run for real each time. What happened to each call
 * the crash left open is read from the resume's reconcile and checked against the world: the
 * effects are counted (the module's count(), or each run() call under the call's idempotency key),
 * not taken from the ledger. A side effect that happened twice is the defect the drill looks for.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ContentBlock, ModelReply } from '../../machines/agent-loop.types.ts';
import type { ReconcileOutcomeName } from '../store/journal/journal-record.ts';
import { idempotencyKeyFor } from '../tools/execute-call.ts';
import type { AgentDefinition } from '../agent/agent-definition.ts';
import type { RunEvent } from '../core/run-events.ts';
import { scriptedModel } from '../model/scripted-model.ts';
import { CrashPoints, SimulatedCrash } from '../runtime/crash-points.ts';
import { resumeRun, startRun } from '../runtime/run-api.ts';
import { openStore } from '../store/open-store.ts';
import { readOnlyFor, type ToolDefinition } from '../tools/tool.ts';
import { DrillPathError } from './drill-errors.ts';
import { checkRepliesFit } from './drill-script.ts';

/** The scratch folder of one play of the path, given to the agent's setup, teardown and count. */
export interface DrillScratch {
  dir: string;
}

export interface DrillOptions {
  agent: AgentDefinition;
  /** The model's replies, in order (scriptReplies, recordedReplies). */
  replies: readonly ModelReply[];
  /** Where the replies came from, for messages (a file, a run). */
  source?: string | undefined;
  /** The run's task (its first user message). Default: "Drill of <agent>". */
  task?: string | undefined;
  /** Before each play, in its fresh scratch folder (the world the tools act on). */
  setup?: ((scratch: DrillScratch) => unknown) | undefined;
  teardown?: ((scratch: DrillScratch) => unknown) | undefined;
  /**
   * How many times the effect of one call happened in the world (e.g. rows under its key).
   * Default: how many times the tool's run() was called with that idempotency key.
   */
  count?: ((effect: { tool: string; idempotencyKey: string; dir: string }) => number | Promise<number>) | undefined;
  /** Where the scratch folders are made (default: the system's temporary folder); removed after each play. */
  scratchRoot?: string | undefined;
  /** Told one line per crash point played. */
  onProgress?: ((line: string) => void) | undefined;
}

/** What happened to one call a crash left open, as the resume settled it and the world shows it. */
export type CallOutcome =
  | 'once-from-ledger'
  | 'once-verified'
  | 'once-verified-then-ran'
  | 'once-idempotent-rerun'
  | 'ran-again-read-only'
  | 'unknown-told-to-model'
  | 'ran-twice';

export interface DrillCallResult {
  point: string;
  callId: string;
  tool: string;
  sideEffect: boolean;
  reconcile: ReconcileOutcomeName | null;
  outcome: CallOutcome;
  /** How many times its effect happened by the end of the resume. */
  effects: number;
}

export interface DrillToolSummary {
  tool: string;
  sideEffect: boolean;
  /** Crash points at which a call of this tool was left open, by outcome. */
  outcomes: Partial<Record<CallOutcome, number>>;
  advice: string | null;
}

export interface DrillReport {
  agent: string;
  version: string;
  source: string;
  /** Every crash point of the path, in order. */
  points: string[];
  calls: DrillCallResult[];
  tools: DrillToolSummary[];
  /** Some side effect happened twice at some point: the drill fails. */
  ranTwice: boolean;
  /** 0: every side effect happened once or the model was told its state is unknown; 1: one ran twice. */
  exitCode: 0 | 1;
  seconds: number;
}

export { DrillPathError } from './drill-errors.ts';

/** Plays the path at every crash point; see the top of this file. */
export async function drillAgent(options: DrillOptions): Promise<DrillReport> {
  const started = performance.now();
  const { agent } = options;
  const source = options.source ?? 'the given replies';
  checkRepliesFit(options.replies, agent, source);
  const points = await pathOf(options);
  const calls: DrillCallResult[] = [];
  for (const point of points) {
    const results = await drillPoint(options, point);
    calls.push(...results);
    const said = results.map((result) => `${result.tool} ${outcomeWords(result.outcome)}`).join('; ');
    options.onProgress?.(`[drill] ${point}: ${said || 'no call was open'}`);
  }
  const tools = summaries(agent.tools, calls);
  const ranTwice = calls.some((call) => call.outcome === 'ran-twice');
  return { agent: agent.name, version: agent.version, source, points, calls, tools, ranTwice, exitCode: ranTwice ? 1 : 0, seconds: (performance.now() - started) / 1000 };
}

/** The crash points one uninterrupted play passes, in order. */
export async function pathOf(options: DrillOptions): Promise<string[]> {
  const crashPoints = new CrashPoints(undefined);
  await play(options, async (parts) => {
    const result = await startRun({ ...parts, crashPoints });
    if (result.status === 'failed') throw new DrillPathError(`the uninterrupted run failed (${result.failure?.message ?? 'no reason given'}): the drill plays a path that ends; fix the replies or the tools`);
  });
  return crashPoints.passed;
}

type PlayParts = Parameters<typeof startRun>[0] & { agent: AgentDefinition };

/** One play in a fresh scratch folder: setup, the body, teardown, the folder removed. */
async function play<T>(options: DrillOptions, body: (parts: PlayParts, scratch: DrillScratch, executions: Map<string, number>) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(options.scratchRoot ?? os.tmpdir(), 'durable-agent-drill-'));
  const scratch = { dir };
  const executions = new Map<string, number>();
  try {
    await options.setup?.(scratch);
    const parts: PlayParts = {
      agent: options.agent,
      store: openStore({ dir: path.join(dir, '.durable-agent') }),
      model: scriptedModel([...options.replies], { name: `drill-${options.agent.name}` }),
      tools: counted(options.agent.tools, executions),
      task: options.task ?? `Drill of ${options.agent.name}`,
      command: 'drill',
    };
    return await body(parts, scratch, executions);
  } finally {
    await options.teardown?.(scratch);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The agent's tools, each run() call counted under the call's idempotency key. */
function counted(tools: readonly ToolDefinition[], executions: Map<string, number>): ToolDefinition[] {
  return tools.map((tool) => ({
    ...tool,
    run: (input: unknown, ctx: Parameters<ToolDefinition['run']>[1]) => {
      executions.set(ctx.idempotencyKey, (executions.get(ctx.idempotencyKey) ?? 0) + 1);
      return tool.run(input, ctx);
    },
  }));
}

/** One crash point: played, killed there, resumed; what happened to each call it left open (and any side effect that happened twice). */
export async function drillPoint(options: DrillOptions, point: string): Promise<DrillCallResult[]> {
  return play(options, async (parts, scratch, executions) => {
    try {
      await startRun({ ...parts, crashAfter: point });
      throw new DrillPathError(`the run did not pass ${point} again: the agent does not take the same path twice on the same replies (a tool whose result changes the path?)`);
    } catch (error) {
      if (!(error instanceof SimulatedCrash)) throw error;
    }
    const reconciled: Array<Extract<RunEvent, { type: 'reconciled' }>> = [];
    const resumed = await resumeRun({
      ...parts,
      observer: (event) => {
        if (event.type === 'reconciled') reconciled.push(event);
      },
    });
    const results: DrillCallResult[] = [];
    for (const event of reconciled) {
      const tool = options.agent.tools.find((candidate) => candidate.name === event.call.name);
      const sideEffect = tool ? !readOnlyFor(tool, event.call.input) : true;
      const key = idempotencyKeyFor(resumed.runId, event.call.id);
      const effects = options.count ? await options.count({ tool: event.call.name, idempotencyKey: key, dir: scratch.dir }) : (executions.get(key) ?? 0);
      results.push({ point, callId: event.call.id, tool: event.call.name, sideEffect, reconcile: event.decision, outcome: outcomeOf(event.decision, sideEffect, effects), effects });
    }
    // A call the crash did not leave open must not have happened twice either: every side effect of the path is counted.
    for (const call of sideEffectCalls(options)) {
      if (results.some((result) => result.callId === call.id)) continue;
      const key = idempotencyKeyFor(resumed.runId, call.id);
      const effects = options.count ? await options.count({ tool: call.name, idempotencyKey: key, dir: scratch.dir }) : (executions.get(key) ?? 0);
      if (effects > 1) results.push({ point, callId: call.id, tool: call.name, sideEffect: true, reconcile: null, outcome: 'ran-twice', effects });
    }
    return results;
  });
}

/** The calls of the replies that are not read-only (by their tool, and their input where the tool says so). */
function sideEffectCalls(options: DrillOptions): Array<{ id: string; name: string }> {
  const readOnly = (block: ContentBlock) => {
    const tool = options.agent.tools.find((candidate) => candidate.name === block.name);
    return tool !== undefined && readOnlyFor(tool, block.input);
  };
  return options.replies.flatMap((reply) =>
    reply.content.filter((block) => block.type === 'tool_use' && !readOnly(block)).map((block) => ({ id: String(block.id), name: String(block.name) })),
  );
}

function outcomeOf(decision: ReconcileOutcomeName, sideEffect: boolean, effects: number): CallOutcome {
  if (sideEffect && effects > 1) return 'ran-twice';
  switch (decision) {
    case 'reused':
      return 'once-from-ledger';
    case 'verified-done':
      return 'once-verified';
    case 'verified-not-done-ran':
      return 'once-verified-then-ran';
    case 're-ran-idempotent':
      return 'once-idempotent-rerun';
    case 're-ran-read-only':
      return 'ran-again-read-only';
    case 'unknown-reported':
      return 'unknown-told-to-model';
    default:
      return 'unknown-told-to-model';
  }
}

const WORDS: Record<CallOutcome, string> = {
  'once-from-ledger': 'once (the ledger had its result)',
  'once-verified': 'once (verify said it had happened)',
  'once-verified-then-ran': 'once (verify said it had not happened; it ran)',
  'once-idempotent-rerun': 'once (declared idempotent, ran again, the effect once)',
  'ran-again-read-only': 'ran again (read-only)',
  'unknown-told-to-model': 'unknown state told to the model',
  'ran-twice': 'RAN TWICE',
};

export function outcomeWords(outcome: CallOutcome): string {
  return WORDS[outcome];
}

function summaries(tools: readonly ToolDefinition[], calls: readonly DrillCallResult[]): DrillToolSummary[] {
  return tools.map((tool) => {
    const outcomes: Partial<Record<CallOutcome, number>> = {};
    for (const call of calls.filter((candidate) => candidate.tool === tool.name)) outcomes[call.outcome] = (outcomes[call.outcome] ?? 0) + 1;
    return { tool: tool.name, sideEffect: !tool.readOnly, outcomes, advice: adviceFor(tool, outcomes) };
  });
}

function adviceFor(tool: ToolDefinition, outcomes: Partial<Record<CallOutcome, number>>): string | null {
  if (outcomes['ran-twice']) {
    return tool.idempotent
      ? 'it is declared idempotent, but its effect happened twice: make it so (hand ctx.idempotencyKey to the outside world as its idempotency key, or upsert under it), or drop idempotent and add verify()'
      : 'its effect happened twice: hand ctx.idempotencyKey to the outside world so a second call is refused there, and add verify()';
  }
  if (outcomes['unknown-told-to-model']) {
    return 'after a kill the model is told its state is unknown: add verify(input, ctx) that looks for ctx.idempotencyKey in the outside world, or declare idempotent: true if a second run does no harm';
  }
  return null;
}
