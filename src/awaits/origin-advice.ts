/**
 * What to tell a person whose resume was refused because the tools differ only by ask_user:
 * that tool comes with `--allow-questions`, so the fix is that flag, not --allow-tool-change
 * (which would take the question away from the model, or give it one the run never had).
 */
import type { RunOrigin } from '../store/journal/journal-record.ts';
import { ASK_USER } from './ask-user.ts';

/** The advice, or null when the difference is not (only) ask_user. */
export function questionsAdvice(startedBy: Pick<RunOrigin, 'tools'>, offered: Pick<RunOrigin, 'tools'>): string | null {
  const had = startedBy.tools.includes(ASK_USER);
  const has = offered.tools.includes(ASK_USER);
  if (had === has) return null;
  const others = (tools: readonly string[]) => tools.filter((name) => name !== ASK_USER).sort().join('\n');
  if (others(startedBy.tools) !== others(offered.tools)) return null;
  return had
    ? `The run was started with --allow-questions (the ${ASK_USER} tool): resume it with --allow-questions (programmatic: allowQuestions: true), not --allow-tool-change.`
    : `The run was started without --allow-questions: resume it without that flag (the model never had the ${ASK_USER} tool).`;
}
