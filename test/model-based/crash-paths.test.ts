/**
 * Every crash point on every path of the machine, proved on the real runtime and a real file
 * store: crash there, resume in a fresh runtime from the store alone, run to the end, and check
 * that nothing was lost, nothing was done twice, and every tool_use has its tool_result.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Message, ToolOutcome } from '../../machines/agent-loop.types.ts';
import type { RunEvent } from '../../src/runtime/run-events.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/fold-journal.ts';
import { toolResultOf, toolUseProblems } from '../helpers/messages.ts';
import {
  type CrashPath,
  describeStep,
  describeTrace,
  describeTransition,
  generateCrashPaths,
  machineTransitions,
} from './crash-paths.ts';
import { newWorld, playScenario, READ_ONLY_TOOLS, resumeScenario, storeDir } from './scenario-runner.ts';

const { walked, paths } = generateCrashPaths();

interface CrashCase {
  name: string;
  path: CrashPath;
  stepIndex: number;
  label: string;
}

const cases: CrashCase[] = paths.flatMap((crashPath) =>
  crashPath.steps.flatMap((step, stepIndex) =>
    step.labels.map((label) => ({
      name: `${describeStep(step)} ✂ ${label} (path ${crashPath.id}${stepIndex > 1 ? `, step ${stepIndex}` : ''})`,
      path: crashPath,
      stepIndex,
      label,
    })),
  ),
);

const crashPoints = new Set(cases.map((c) => `${c.path.id}/${c.label}`)).size;
console.log(
  `[crash suite] ${walked} paths walked (simple, MAX_TURNS=1; shortest, MAX_TURNS=2) → ${paths.length} distinct scenarios; ` +
    `${crashPoints} crash points → ${cases.length} crash-and-resume tests`,
);

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'da-crash-suite-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let dirCount = 0;
const freshDir = () => {
  const dir = path.join(root, String(++dirCount));
  fs.mkdirSync(dir);
  return dir;
};

interface Baseline {
  status: string;
  messages: Message[];
  passed: string[];
}

const baselines = new Map<number, Promise<Baseline>>();

/** The path's scenario played without a crash: what every crashed-and-resumed run is held to. */
function baselineOf(crashPath: CrashPath): Promise<Baseline> {
  let baseline = baselines.get(crashPath.id);
  if (!baseline) {
    baseline = (async () => {
      const dir = freshDir();
      const played = await playScenario(crashPath.scenario, dir, newWorld());
      const view = foldJournal(storeDir(dir), await new FileStore(storeDir(dir)).load());
      fs.rmSync(dir, { recursive: true, force: true });
      return { status: played.result!.status, messages: view.context.messages, passed: played.passed };
    })();
    baselines.set(crashPath.id, baseline);
  }
  return baseline;
}

async function withTrace(crash: CrashCase, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    const trace = describeTrace(crash.path, crash.stepIndex, crash.label);
    (error as Error).message += `\n\nevent trace of path ${crash.path.id} (scenario ${crash.path.scenarioKey}):\n${trace}`;
    throw error;
  }
}

describe('the machine paths and the runtime agree', () => {
  it('every path’s crash labels are the labels the runtime passes, in order', async () => {
    for (const crashPath of paths) {
      const expected = crashPath.steps.flatMap((step) => step.labels);
      const { passed } = await baselineOf(crashPath);
      expect(passed.slice(0, expected.length), `path ${crashPath.id}`).toEqual(expected);
    }
  });

  it('on every step, the effect the live transition returned is the one its snapshot announces on resume', () => {
    for (const crashPath of paths) {
      for (const step of crashPath.steps) expect(step.effects.announced, `path ${crashPath.id}: ${describeStep(step)}`).toBe(step.effects.returned);
    }
  });

  it('every state and every transition of the machine is reached by some crash test', () => {
    const reachedStates = new Set(paths.flatMap((p) => p.steps.map((s) => s.to)));
    const taken = new Set(paths.flatMap((p) => p.steps.flatMap((s) => s.transitions)));
    const missing: string[] = [];
    for (const [state, transitions] of machineTransitions()) {
      if (!reachedStates.has(state as never)) missing.push(`state ${state}`);
      for (const definition of transitions) if (!taken.has(definition)) missing.push(`transition ${describeTransition(definition)}`);
    }
    expect(missing).toEqual([]);
  });
});

describe('crash anywhere, resume, finish', () => {
  // Each test has its own directory and world; running them side by side overlaps their fsyncs.
  it.concurrent.each(cases)('$name', async (crash) => {
    await withTrace(crash, async () => {
      const { scenario } = crash.path;
      const baseline = await baselineOf(crash.path);
      const dir = freshDir();
      const world = newWorld();

      const crashed = await playScenario(scenario, dir, world, crash.label);
      expect(crashed.crashedAt).toBe(crash.label);

      // 4. A crash at a transition boundary leaves a store that loads, with nothing cut off.
      const loaded = await new FileStore(storeDir(dir)).load();
      expect(loaded.tornTail).toBeNull();
      const atCrash = foldJournal(storeDir(dir), loaded);
      const attemptsAtCrash = new Map(world.attempts.runs);
      const effectsAtCrash = new Map(world.effects.runs);
      const openTurn = atCrash.state === 'pendingTool' || atCrash.state === 'effectRecorded';
      const openCalls = openTurn ? atCrash.context.pending : [];

      const resumed = await resumeScenario(scenario, dir, world);
      const final = foldJournal(storeDir(dir), await new FileStore(storeDir(dir)).load());
      const messages = final.context.messages;

      // 1. Valid for the Messages API: every tool_use answered once, in the next message, results first.
      expect(toolUseProblems(messages)).toEqual([]);

      // 2. No side effect took place twice for one tool_use_id.
      for (const [id, runs] of world.effects.runs) expect(runs, `effects of ${id}`).toBeLessThanOrEqual(1);

      // 3. Each call left open by the crash was settled by the right branch.
      const decisions = reconcileDecisions(resumed.events);
      expect([...decisions.keys()]).toEqual(openCalls.map((call) => call.id));
      for (const call of openCalls) {
        const recorded: ToolOutcome | undefined = atCrash.ledger.get(call.id);
        const ranOnResume = world.attempts.of(call.id) - (attemptsAtCrash.get(call.id) ?? 0);
        const result = toolResultOf(messages, call.id);
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

      // 5. Where every open call's result was recorded (or could be recomputed), the run ends exactly as the uninterrupted one.
      expect(resumed.result?.status).toBe(baseline.status);
      if ([...decisions.values()].every((d) => d === 'reused' || d === 're-ran-read-only')) {
        expect(messages).toEqual(baseline.messages);
      }
    });
  });
});

function reconcileDecisions(events: RunEvent[]): Map<string, string> {
  const decisions = new Map<string, string>();
  for (const event of events) if (event.type === 'reconciled') decisions.set(event.call.id, event.decision);
  return decisions;
}
