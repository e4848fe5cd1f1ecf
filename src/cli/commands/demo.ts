/** `durable-agent demo`: the lesson's task, in a directory, crashable and resumable. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { demoScript, DEMO_TASK, ensureSampleNotes } from '../../demo/demo-task.ts';
import { demoTools } from '../../demo/demo-tools.ts';
import type { Model } from '../../model/model.ts';
import { scriptedModel } from '../../model/scripted-model.ts';
import { type CrashHandler, CrashPoints } from '../../runtime/crash-points.ts';
import { resumeRun, startRun } from '../../runtime/run-api.ts';
import type { RunResult } from '../../runtime/run-events.ts';
import { FileStore } from '../../store/file-store.ts';
import { type DemoArgs, UsageError } from '../args.ts';
import { EXIT } from '../exit-codes.ts';
import { realModel } from '../real-model.ts';
import { plainReporter, type Writers } from '../plain-reporter.ts';

export const STATE_DIR = '.durable-agent';

export async function demoCommand(args: DemoArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  if (args.listCrashPoints) return listCrashPoints(writers);
  const dir = path.resolve(args.dir);
  const model = await demoModel(args, env);
  const parts = {
    store: new FileStore(path.join(dir, STATE_DIR), { writeFaults: env.DURABLE_AGENT_FAIL_WRITE }),
    model,
    tools: demoTools(dir, { paceMs: args.paceMs, jitterMs: args.jitterMs, verify: args.verify }),
    observer: plainReporter(writers, args.verbose),
    crashAfter: env.CRASH_AFTER,
    onCrash: exitOnCrash(env.CRASH_MODE, writers),
    ...(args.maxTokens ? { maxTokens: args.maxTokens } : {}),
  };
  exitOnInterrupt(writers);
  let result: RunResult;
  if (args.resume) {
    result = await resumeRun({ ...parts, ...(args.maxTurns ? { maxTurns: args.maxTurns } : {}) });
  } else {
    ensureSampleNotes(dir);
    result = await startRun({ ...parts, task: DEMO_TASK, fresh: args.fresh, ...(args.maxTurns ? { maxTurns: args.maxTurns } : {}) });
  }
  return exitCodeOf(result);
}

export function exitCodeOf(result: RunResult): number {
  switch (result.status) {
    case 'done':
      return EXIT.done;
    case 'stoppedAtMaxTurns':
      return EXIT.stoppedAtMaxTurns;
    case 'failed':
      return EXIT.runFailed;
  }
}

async function demoModel(args: DemoArgs, env: NodeJS.ProcessEnv): Promise<Model> {
  if (!args.model) return scriptedModel(demoScript(), { name: 'scripted-demo', paceMs: args.paceMs, jitterMs: args.jitterMs });
  return realModel(args.model, env, args.api);
}

/**
 * An armed crash point ends the process on the spot, like a kill: no unwinding, no cleanup
 * (the run's lock stays behind and is taken over by the next process, as after a real kill).
 */
export function exitOnCrash(mode: string | undefined, writers: Writers): CrashHandler {
  if (mode !== undefined && mode !== '' && mode !== 'exit' && mode !== 'sigkill') {
    throw new UsageError(`CRASH_MODE=${mode} is not a crash mode: use "exit" (print [kill] and exit 137, the default) or "sigkill".`);
  }
  return (label) => {
    if (mode === 'sigkill') process.kill(process.pid, 'SIGKILL');
    writers.out(`[kill] simulated kill at ${label}`);
    process.exit(EXIT.simulatedCrash);
  };
}

/**
 * Ctrl-C or SIGTERM mid-run is a crash like any other: everything up to the last save is on
 * disk and a resume reconciles the rest. Say so and leave; the lock is taken over on resume.
 */
export function exitOnInterrupt(writers: Writers, resumeCommand = 'durable-agent demo --resume'): void {
  const stop = (signal: string) => {
    writers.err(`[interrupted] ${signal}: the run is saved up to its last checkpoint. Resume it with: ${resumeCommand}`);
    process.exit(EXIT.interrupted);
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

/** Runs the whole demo in a scratch directory and prints every crash label it passed, in order. */
async function listCrashPoints(writers: Writers): Promise<number> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-points-'));
  try {
    ensureSampleNotes(scratch);
    const crashPoints = new CrashPoints(undefined);
    await startRun({
      store: new FileStore(path.join(scratch, STATE_DIR)),
      model: scriptedModel(demoScript(), { name: 'scripted-demo' }),
      tools: demoTools(scratch),
      task: DEMO_TASK,
      crashPoints,
    });
    for (const label of crashPoints.passed) writers.out(label);
    return EXIT.done;
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
