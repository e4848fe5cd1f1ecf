/**
 * Plays a crash-path scenario on the real runtime with a real file store: uninterrupted, crashed
 * at a label, and resumed from the store alone in a fresh runtime. The tools act on a "world"
 * that outlives the crash (as the outside world does) and count every real execution.
 */
import path from 'node:path';
import type { DecisionRequest } from '../../src/approval/decision-step.ts';
import { endTurnReply, scriptedModel, stopReply } from '../../src/model/scripted-model.ts';
import { CrashPoints, SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent, RunResult } from '../../src/runtime/run-events.ts';
import { FileStore } from '../../src/store/file-store.ts';
import type { RunStore } from '../../src/store/store.ts';
import { defineTool, type ToolDefinition } from '../../src/tools/tool.ts';
import { ExecutionCounter } from '../helpers/counting-tools.ts';
import { FINISH_TEXT, type Scenario } from './crash-paths.ts';

export interface World {
  /** Every call of a tool's run(), whether it got as far as its effect or threw first. */
  attempts: ExecutionCounter;
  /** Side effects that took place (a tool that throws does so before its effect). */
  effects: ExecutionCounter;
  /** Idempotency keys of charges that happened, for charge_card's verify(). */
  charged: Set<string>;
  /** How many times the onDecision handler was asked about each call. */
  asked: Map<string, number>;
}

export function newWorld(): World {
  return { attempts: new ExecutionCounter(), effects: new ExecutionCounter(), charged: new Set(), asked: new Map() };
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
      run: ({ q }, ctx) => act('lookup', ctx.toolUseId, ctx.idempotencyKey, `answer to ${q}`),
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
}

/** Where scenario runs are stored: a fresh store per key (a directory, a run id). */
export interface ScenarioStores {
  readonly name: string;
  open(key: string, writeFaults?: string): RunStore;
  /** Releases what open() holds (a file descriptor); the journal stays. */
  close(store: RunStore): void;
}

export function fileStores(): ScenarioStores {
  return {
    name: 'file store',
    open: (dir, writeFaults) => new FileStore(path.join(dir, '.durable-agent'), writeFaults ? { writeFaults } : {}),
    close: (store) => (store as FileStore).close(),
  };
}

function parts(scenario: Scenario, key: string, world: World, withFaults: boolean, events: RunEvent[], stores: ScenarioStores) {
  const faults = scenario.failingEffectWrites.map((n) => `effect-write:${n}`).join(',');
  return {
    store: stores.open(key, withFaults && faults ? faults : undefined),
    model: scriptedModel([...scenario.replies, endTurnReply(FINISH_TEXT)], scenario.compaction?.summary === 'empty' ? { summary: stopReply('end_turn') } : {}),
    // A window the scenarios stay under unless a reply holds LONG_TEXT (crash-paths.ts).
    ...(scenario.compaction ? { compaction: { mode: 'client' as const, contextWindow: SCENARIO_WINDOW } } : {}),
    tools: scenarioTools(scenario, world),
    observer: (event: RunEvent) => events.push(event),
    toolTimeoutMs: 5_000,
    allowQuestions: true,
    onDecision: (request: DecisionRequest) => {
      world.asked.set(request.tool_use_id, (world.asked.get(request.tool_use_id) ?? 0) + 1);
      // A path that ends waiting has no decision: the run stops there (status 'waiting').
      return scenario.decisions[request.tool_use_id] ?? null;
    },
    wait: false,
  };
}

/** Starts the scenario under a fresh key; with a label, the run is crashed right after it. */
export async function playScenario(scenario: Scenario, key: string, world: World, stores: ScenarioStores, crashAfter?: string): Promise<Played> {
  const events: RunEvent[] = [];
  const crashPoints = new CrashPoints(crashAfter);
  const base = parts(scenario, key, world, true, events, stores);
  try {
    const result = await startRun({ ...base, task: 'the task', maxTurns: scenario.maxTurns, maxPausesInARow: scenario.maxPausesInARow, crashPoints });
    return { result, crashedAt: null, events, passed: crashPoints.passed };
  } catch (error) {
    if (error instanceof SimulatedCrash) return { result: null, crashedAt: error.label, events, passed: crashPoints.passed };
    throw error;
  } finally {
    stores.close(base.store);
  }
}

/** Resumes from the store alone, with a fresh runtime and no write faults (the disk has recovered). */
export async function resumeScenario(scenario: Scenario, key: string, world: World, stores: ScenarioStores): Promise<Played> {
  const events: RunEvent[] = [];
  const base = parts(scenario, key, world, false, events, stores);
  try {
    const result = await resumeRun(base);
    return { result, crashedAt: null, events, passed: [] };
  } finally {
    stores.close(base.store);
  }
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
