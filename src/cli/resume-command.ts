/**
 * How to go on with a stored run of a folder, from what its journal says started it: `demo`,
 * `run` with its model, or `run --agents` with the module its agent was loaded from.
 */
import type { JournalHeader } from '../store/journal/journal-record.ts';
import { cliCommand, dirWords } from '../words/shell-command.ts';

/** The command that resumes the run; words for a run no command of this line started. */
export function resumeCommandOf(env: NodeJS.ProcessEnv, dir: string, header: Pick<JournalHeader, 'agent' | 'startedBy'>, runId: string | null): string {
  const origin = header.startedBy;
  const agent = agentResumeCommand(env, dir, runId, header);
  if (agent !== null) return agent;
  if (origin?.command === 'run') {
    const questions = origin.tools.includes('ask_user') ? ['--allow-questions'] : [];
    return cliCommand(env, ['run', '--resume', '--model', origin.model, ...dirWords(dir, runId), ...questions]);
  }
  if (origin?.command === 'demo' || origin === undefined) return cliCommand(env, ['demo', '--resume', ...dirWords(dir, runId)]);
  return 'the program or worker that drives it';
}

/**
 * `run --resume --agents FILE --agent NAME [--dir DIR] [--run ID]`, with the module its journal
 * names; null for a run no agent started, or one whose module is not known (a program's).
 */
export function agentResumeCommand(env: NodeJS.ProcessEnv, dir: string, runId: string | null, header: Pick<JournalHeader, 'agent' | 'startedBy'>): string | null {
  const module = header.startedBy?.agentsModule;
  if (!header.agent || module === undefined) return null;
  return cliCommand(env, ['run', '--resume', '--agents', module, '--agent', header.agent.name, ...dirWords(dir, runId)]);
}
