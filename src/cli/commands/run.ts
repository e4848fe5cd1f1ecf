/** `durable-agent run`: a real model on the user's task, with file tools in a directory. */
import fs from 'node:fs';
import path from 'node:path';
import { resumeRun, startRun } from '../../runtime/run-api.ts';
import type { RunResult } from '../../runtime/run-events.ts';
import { FileStore } from '../../store/file-store.ts';
import { fileTools } from '../../tools/file-tools.ts';
import { type RunArgs, UsageError } from '../args.ts';
import type { Writers } from '../plain-reporter.ts';
import { realModel } from '../real-model.ts';
import { openRunReporter } from '../run-reporter.ts';
import { dirOption, exitCodeOf, exitOnCrash, exitOnInterrupt, STATE_DIR } from './demo.ts';

export async function runCommand(args: RunArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  const dir = path.resolve(args.dir);
  const system = args.systemFile ? readSystemPrompt(args.systemFile) : null;
  const model = await realModel(args.model!, env, args.api);
  const resumeCommand = `durable-agent run --resume --model ${args.model}${dirOption(dir)}`;
  const reporter = await openRunReporter(writers, env, { plain: args.plain, verbose: args.verbose, task: args.task, resumeHint: resumeCommand });
  const parts = {
    store: new FileStore(path.join(dir, STATE_DIR), { writeFaults: env.DURABLE_AGENT_FAIL_WRITE }),
    model,
    tools: fileTools(dir),
    observer: reporter.observer,
    crashAfter: env.CRASH_AFTER,
    onCrash: exitOnCrash(env.CRASH_MODE, reporter.writers),
    ...(args.maxTokens ? { maxTokens: args.maxTokens } : {}),
  };
  exitOnInterrupt(reporter.writers, resumeCommand);
  let result: RunResult;
  try {
    if (args.resume) {
      if (system !== null) reporter.writers.err('[resume] --system is ignored: the run keeps the system prompt it started with.');
      result = await resumeRun({ ...parts, ...(args.maxTurns ? { maxTurns: args.maxTurns } : {}) });
    } else {
      fs.mkdirSync(dir, { recursive: true });
      result = await startRun({ ...parts, task: args.task!, system, fresh: args.fresh, ...(args.maxTurns ? { maxTurns: args.maxTurns } : {}) });
    }
  } finally {
    reporter.close(); // before main prints an error: the terminal must be the TUI's no more
  }
  return exitCodeOf(result);
}

function readSystemPrompt(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--system ${file}: the file cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`);
  }
}
