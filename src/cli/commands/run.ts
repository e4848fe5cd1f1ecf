/** `durable-agent run`: a real model on the user's task, with file tools in a directory. */
import fs from 'node:fs';
import path from 'node:path';
import { resumeRun, startRun } from '../../runtime/run-api.ts';
import type { RunResult } from '../../runtime/run-events.ts';
import { FileStore } from '../../store/file-store.ts';
import { fileTools } from '../../tools/file-tools.ts';
import { type RunArgs, UsageError } from '../args.ts';
import { plainReporter, type Writers } from '../plain-reporter.ts';
import { realModel } from '../real-model.ts';
import { exitCodeOf, exitOnCrash, exitOnInterrupt, STATE_DIR } from './demo.ts';

export async function runCommand(args: RunArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  const dir = path.resolve(args.dir);
  const system = args.systemFile ? readSystemPrompt(args.systemFile) : null;
  const model = await realModel(args.model!, env, args.api);
  const parts = {
    store: new FileStore(path.join(dir, STATE_DIR), { writeFaults: env.DURABLE_AGENT_FAIL_WRITE }),
    model,
    tools: fileTools(dir),
    observer: plainReporter(writers, args.verbose),
    crashAfter: env.CRASH_AFTER,
    onCrash: exitOnCrash(env.CRASH_MODE, writers),
    ...(args.maxTokens ? { maxTokens: args.maxTokens } : {}),
  };
  exitOnInterrupt(writers, `durable-agent run --resume --model ${args.model}${args.dir === process.cwd() ? '' : ` --dir ${args.dir}`}`);
  let result: RunResult;
  if (args.resume) {
    if (system !== null) writers.err('[resume] --system is ignored: the run keeps the system prompt it started with.');
    result = await resumeRun({ ...parts, ...(args.maxTurns ? { maxTurns: args.maxTurns } : {}) });
  } else {
    fs.mkdirSync(dir, { recursive: true });
    result = await startRun({ ...parts, task: args.task!, system, fresh: args.fresh, ...(args.maxTurns ? { maxTurns: args.maxTurns } : {}) });
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
