/**
 * What the run commands (demo, run) share: the store in DIR/.durable-agent, the plain or live
 * reporter, crash and interrupt handling, starting or resuming, and the exit code.
 */
import path from 'node:path';
import type { Model } from '../model/model.ts';
import type { CrashHandler } from '../runtime/crash-points.ts';
import { resumeRun, startRun } from '../runtime/run-api.ts';
import type { RunResult } from '../runtime/run-events.ts';
import { FileStore } from '../store/file-store.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { UsageError } from './args.ts';
import { EXIT } from './exit-codes.ts';
import type { Writers } from './plain-reporter.ts';
import { openRunReporter } from './run-reporter.ts';
import { STATE_DIR } from './state-dir.ts';

export { STATE_DIR } from './state-dir.ts';

export interface CliRun {
  dir: string;
  env: NodeJS.ProcessEnv;
  writers: Writers;
  model: Model;
  tools: ToolDefinition[];
  output: { plain: boolean; verbose: boolean };
  /** The command line that picks this run up again, shown when the process stops early. */
  resumeCommand: string;
  /** Exactly one of resume and start is set. */
  resume: { maxTurns: number | null } | null;
  start: { task: string; system: string | null; fresh: boolean; maxTurns: number | null; prepare?: () => void } | null;
  maxTokens: number | null;
}

export async function driveCliRun(run: CliRun): Promise<number> {
  const { env } = run;
  const reporter = await openRunReporter(run.writers, env, { ...run.output, task: run.start?.task ?? null, resumeHint: run.resumeCommand });
  const parts = {
    store: new FileStore(path.join(run.dir, STATE_DIR), { writeFaults: env.DURABLE_AGENT_FAIL_WRITE }),
    model: run.model,
    tools: run.tools,
    observer: reporter.observer,
    crashAfter: env.CRASH_AFTER,
    onCrash: exitOnCrash(env.CRASH_MODE, reporter.writers),
    ...(run.maxTokens ? { maxTokens: run.maxTokens } : {}),
  };
  exitOnInterrupt(reporter.writers, run.resumeCommand);
  let result: RunResult;
  try {
    if (run.start) {
      const { task, system, fresh, maxTurns, prepare } = run.start;
      prepare?.();
      result = await startRun({ ...parts, task, system, fresh, ...(maxTurns ? { maxTurns } : {}) });
    } else {
      const maxTurns = run.resume?.maxTurns;
      result = await resumeRun({ ...parts, ...(maxTurns ? { maxTurns } : {}) });
    }
  } finally {
    reporter.close(); // before main prints an error: the terminal must be the TUI's no more
  }
  return exitCodeOf(result);
}

/** ` --dir "…"` unless the run is in the current directory. */
export function dirOption(dir: string): string {
  return path.resolve(dir) === process.cwd() ? '' : ` --dir ${JSON.stringify(path.resolve(dir))}`;
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
export function exitOnInterrupt(writers: Writers, resumeCommand: string): void {
  const stop = (signal: string) => {
    writers.err(`[interrupted] ${signal}: the run is saved up to its last checkpoint. Resume it with: ${resumeCommand}`);
    process.exit(EXIT.interrupted);
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}
