/**
 * How a run command reports: the plain lines, or the live TUI on a terminal (see output-mode).
 * The TUI's code, ink and React are imported only when it is chosen.
 */
import type { RunObserver } from '../core/run-events.ts';
import type { DecideInput } from '../awaits/decide.ts';
import type { LessonWords } from '../lang/lesson-words.ts';
import type { DecisionCommands } from '../words/decision-lines.ts';
import { userName } from './user-name.ts';
import { chooseOutputMode } from './output-mode.ts';
import { plainReporter, type Writers } from './plain-reporter.ts';

export interface RunReporter {
  observer: RunObserver;
  /** Where the command prints its own lines while the run is shown (the kill line, the interrupt notice). */
  writers: Writers;
  /** Ends the display and gives the terminal back; call it however the run ended. */
  close(): void;
}

export interface RunReporterOptions {
  plain: boolean;
  verbose: boolean;
  /** The run's task, when the command knows it (a resume's events do not carry it). */
  task: string | null;
  /** The command that resumes the run, shown if the process stops before the end. */
  resumeHint: string;
  /** The commands that decide a waiting call of this run, printed under its [approval] / [question] line. */
  decisionCommands?: DecisionCommands | null;
  /** How the live view's prompt decides a waiting call (only when the run waits); shown only if stdin is a terminal too. */
  decide?: ((input: DecideInput) => Promise<void>) | null;
  /** The language of the lesson's lines (default: English). */
  words?: LessonWords | undefined;
}

export async function openRunReporter(writers: Writers, env: NodeJS.ProcessEnv, options: RunReporterOptions): Promise<RunReporter> {
  const terminal = writers.terminal;
  if (!terminal || chooseOutputMode({ stdoutIsTTY: terminal.isTTY === true, env, plain: options.plain }) === 'plain') {
    return { observer: plainReporter(writers, options.verbose, options.decisionCommands ?? null, options.words), writers, close: () => {} };
  }
  // React's development build (chosen when NODE_ENV is unset) costs several times the CPU per frame.
  process.env.NODE_ENV ??= 'production';
  const { createTuiReporter } = await import('../tui/mount-tui.tsx');
  return createTuiReporter({
    stdout: terminal,
    verbose: options.verbose,
    task: options.task,
    resumeHint: options.resumeHint,
    decisionCommands: options.decisionCommands ?? null,
    words: options.words,
    decider: options.decide && process.stdin.isTTY ? { decide: options.decide, by: userName() } : null,
  });
}
