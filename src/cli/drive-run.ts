/**
 * What the run commands (demo, run, run --agents) share: the store in DIR/.durable-agent, the plain or live
 * reporter, crash and interrupt handling, starting or resuming, and the exit code.
 */
import { RunPausedError } from '../control/run-control.ts';
import { forkAdviceFor } from '../control/run-end.ts';
import { type Lang, wordsOf } from '../lang/lang.ts';
import type { LessonWords } from '../lang/lesson-words.ts';
import type { AgentDefinition } from '../agent/agent-definition.ts';
import type { Model } from '../model/model.ts';
import type { CrashHandler } from '../runtime/crash-points.ts';
import { decide, type DecideInput } from '../awaits/decide.ts';
import { type ResumeOptions, resumeRun, type RunParts, type StartOptions, startRun } from '../runtime/run-api.ts';
import type { RunObserver, RunResult } from '../core/run-events.ts';
import type { FolderRunStore } from '../store/store.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { UsageError } from './usage-error.ts';
import { lockLeaseOf } from './lock-lease-env.ts';
import { decisionCommandsFor } from '../words/decision-lines.ts';
import { cliInvocation } from '../words/shell-command.ts';
import { EXIT } from './exit-codes.ts';
import type { Writers } from './plain-reporter.ts';
import { openRunReporter, type RunReporter } from './run-reporter.ts';
import { fileStoreOf, folderStoreAt } from './run-store.ts';
import { openTraceExport, type TraceExport, traceOptions } from './trace-export.ts';

export { STATE_DIR } from './state-dir.ts';

export interface CliRun {
  /** The command, recorded in the journal's header when the run starts and checked on resume. */
  command: 'demo' | 'run';
  dir: string;
  /** --run ID: the run of that id in DIR's folder of runs (started once, attached to after); null: DIR's own run. */
  runId: string | null;
  env: NodeJS.ProcessEnv;
  writers: Writers;
  model: Model;
  tools: ToolDefinition[];
  output: { plain: boolean; verbose: boolean };
  /** The command line that picks this run up again, shown when the process stops early. */
  resumeCommand: string;
  /** A line printed once the run is started (not when it is refused): the id the command made for it, say. */
  startedLine?: string | undefined;
  /** Exactly one of resume and start is set. */
  resume: Pick<ResumeOptions, 'maxTurns' | 'acceptLostRecord' | 'allowToolChange' | 'replaceDecisionPolicy' | 'message'> | null;
  start: (Pick<StartOptions, 'task' | 'system' | 'fresh' | 'maxTurns' | 'tenant'> & { prepare?: () => void }) | null;
  /** The run's options as the API takes them, from the command's option groups (undefined: not given). */
  options: RunOptions;
  /** `run --agents`: the agent the run is driven by (its name and version are pinned), and the module it came from. */
  agent?: { definition: AgentDefinition; module: string } | undefined;
  /** Exported traces carry messages and tool content. */
  traceContent: boolean;
  /** true: --wait; false: --no-wait; undefined: wait when stdout is a terminal. */
  wait: boolean | undefined;
  /** The language of the lesson's lines and of what the run tells the model (absent: English). */
  lang?: Lang | undefined;
}

/** What a command line sets of a run's parts, as they are. */
export type RunOptions = Pick<
  RunParts,
  'maxTokens' | 'takeOver' | 'toolConcurrency' | 'toolTimeoutMs' | 'budget' | 'compaction' | 'clearToolUses' | 'requireApproval' | 'allowQuestions' | 'decisionTimeoutMs'
>;

export async function driveCliRun(run: CliRun): Promise<number> {
  const { env } = run;
  // The drill settings are checked before the live view takes the terminal: a refusal is then
  // printed on a terminal in its normal state.
  const store = fileStoreOf(run.dir, run.runId, { writeFaults: env.DURABLE_AGENT_FAIL_WRITE, lockLeaseMs: lockLeaseOf(env) });
  const crashMode = crashModeOf(env.CRASH_MODE);
  const traces = await openTraceExport(env, run.traceContent);
  const words = wordsOf(run.lang);
  const reporter = await openRunReporter(run.writers, env, {
    ...run.output,
    task: run.start?.task ?? null,
    resumeHint: run.resumeCommand,
    decisionCommands: decisionCommandsFor(env, run.dir, run.resumeCommand, run.runId),
    decide: waitsForDecisions(run.wait, run.writers) ? promptDecide(store, run.tools) : null,
    words,
  });
  const { startedLine } = run;
  const parts = {
    store,
    model: run.model,
    tools: run.tools,
    observer: startedLine === undefined ? reporter.observer : announcing(reporter, startedLine),
    crashAfter: env.CRASH_AFTER,
    onCrash: exitOnCrash(crashMode, reporter.writers, traces, words),
    command: run.command,
    lang: run.lang,
    ...(run.agent ? { agent: run.agent.definition, agentsModule: run.agent.module } : {}),
    ...run.options,
    // The run waits for a decision when told to (--wait), never with --no-wait, and otherwise when
    // stdout is a terminal: a person is there to see the [approval] line. A run in a pipe, a
    // service or CI stops instead (exit 7), so that nothing hangs unseen.
    wait: waitsForDecisions(run.wait, run.writers),
    ...traceOptions(traces),
  };
  exitOnInterrupt(reporter.writers, run.resumeCommand, traces);
  let result: RunResult;
  try {
    if (run.start) {
      const { prepare, ...start } = run.start;
      prepare?.();
      result = await startRun({ ...parts, ...start });
    } else {
      result = await resumeRun({ ...parts, ...run.resume! });
    }
  } catch (error) {
    if (!(error instanceof RunPausedError)) throw error;
    reporter.writers.err(`[paused] ${error.message.replace(/^The run stopped/, 'the run stopped')} Resume it with: ${run.resumeCommand}`);
    return EXIT.interrupted;
  } finally {
    reporter.close(); // before main prints an error: the terminal must be the TUI's no more
    await traces?.shutdown();
  }
  if (result.status === 'cancelled') run.writers.err(`[cancelled] ${forkAdviceFor(store.location, cliInvocation(run.env))}`);
  return exitCodeOf(result);
}

/** The reporter's observer, with `line` printed (above the live view) before the run's first line. */
function announcing(reporter: RunReporter, line: string): RunObserver {
  return (event) => {
    if (event.type === 'started') reporter.writers.out(line);
    reporter.observer(event);
  };
}

function waitsForDecisions(wait: boolean | undefined, writers: Writers): boolean {
  return wait ?? writers.terminal?.isTTY === true;
}

/**
 * The live view's y / n / e: a decision checked and written to the inbox like `approve` from
 * another terminal (the run takes it up within a second), read through a store of its own.
 */
function promptDecide(store: FolderRunStore, tools: ToolDefinition[]) {
  return async (input: DecideInput): Promise<void> => {
    await decide(folderStoreAt(store.dir, {}, store.runId), input, { tools });
  };
}

export function exitCodeOf(result: RunResult): number {
  switch (result.status) {
    case 'done':
      return EXIT.done;
    case 'stoppedAtMaxTurns':
      return EXIT.stoppedAtMaxTurns;
    case 'failed':
      return EXIT.runFailed;
    case 'waiting':
      return EXIT.waitingForPerson;
    case 'cancelled':
      return EXIT.cancelled;
    case 'stoppedAtBudget':
      return EXIT.budgetReached;
  }
}

export type CrashMode = 'exit' | 'sigkill';

export function crashModeOf(mode: string | undefined): CrashMode {
  if (mode === undefined || mode === '' || mode === 'exit') return 'exit';
  if (mode === 'sigkill') return 'sigkill';
  throw new UsageError(`CRASH_MODE=${mode} is not a crash mode: use "exit" (print [kill] and exit 137, the default) or "sigkill".`);
}

/**
 * An armed crash point ends the process on the spot, like a kill: no unwinding, no cleanup
 * (the run's lock stays behind and is taken over by the next process, as after a real kill).
 */
export function exitOnCrash(mode: CrashMode, writers: Writers, traces: TraceExport | null, words: LessonWords): CrashHandler {
  return (label) => {
    if (mode === 'sigkill') process.kill(process.pid, 'SIGKILL');
    writers.out(words.kill(label));
    if (!traces) process.exit(EXIT.simulatedCrash);
    // The run waits on this promise: nothing more happens before the process exits, as after a kill.
    const crash = { 'durable_agent.crash.label': label, 'durable_agent.crash.simulated': true };
    return traces.stop({ event: 'durable_agent.crash', attributes: crash, description: `simulated kill at ${label}` }).then(() => process.exit(EXIT.simulatedCrash));
  };
}

/**
 * Ctrl-C or SIGTERM mid-run is a crash like any other: everything up to the last save is on
 * disk and a resume reconciles the rest. Say so and leave; the lock is taken over on resume.
 */
export function exitOnInterrupt(writers: Writers, resumeCommand: string, traces: TraceExport | null = null): void {
  const stop = (signal: string) => {
    writers.err(`[interrupted] ${signal}: the run is saved up to its last checkpoint. Resume it with: ${resumeCommand}`);
    // At once, as a kill would: the live view draws its last frame from the 'exit' hook, which a
    // wait for the output to drain would leave undrawn.
    if (!traces) process.exit(EXIT.interrupted);
    // The spans leave first (a few seconds at most); the run may take a step meanwhile, saved as ever.
    const why = { event: 'durable_agent.interrupted', attributes: { 'durable_agent.signal': signal }, description: `interrupted by ${signal}` };
    void traces.stop(why).finally(() => process.exit(EXIT.interrupted));
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}
