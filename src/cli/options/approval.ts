/** A person in the loop: which calls wait for a decision, and how a run waits for one. */
import type { RequireApproval } from '../../awaits/needs-decision.ts';
import { formatDuration } from '../duration.ts';
import { UsageError } from '../usage-error.ts';
import { option, type ValuesOf } from './option.ts';
import { shorten } from './read-options.ts';

const DAY_MS = 86_400_000;

export const requireApproval = option({
  key: 'requireApproval',
  type: 'string',
  value: 'TOOLS',
  help: "NAME[,NAME…] or side-effects (every tool that is not read-only): each call to these tools waits for a person's decision (approve, deny) before it runs",
  api: 'RunParts.requireApproval',
});
export const allowQuestions = option({
  key: 'allowQuestions',
  type: 'boolean',
  help: "give the model an ask_user tool: its question waits for a person's answer (durable-agent answer)",
  api: 'RunParts.allowQuestions',
});
export const wait = option({
  key: 'wait',
  type: 'boolean',
  help: 'wait for decisions even when stdout is not a terminal (a service, a pipe); approve, deny or answer give them from another shell',
  api: 'RunParts.wait',
});
export const noWait = option({
  key: 'noWait',
  type: 'boolean',
  help: 'never wait for a decision: stop (exit 7) and print the commands that give it; resume with --resume afterwards',
  api: 'RunParts.wait',
});
export const decisionTimeout = option({
  key: 'decisionTimeoutMs',
  type: 'duration',
  value: 'DURATION',
  help: 'deny what is still undecided this long after it began to wait (90s, 15m, 2h, 3d), with the reason "no decision within DURATION"',
  min: 1_000,
  max: 90 * DAY_MS,
  api: 'RunParts.decisionTimeoutMs',
});

export const approvalOptions = [requireApproval, wait, noWait, decisionTimeout] as const;

/** Which calls wait for a person, and whether this process waits for them. */
export interface ApprovalArgs {
  requireApproval: RequireApproval | undefined;
  /** true: --wait; false: --no-wait; undefined: wait when stdout is a terminal. */
  wait: boolean | undefined;
  decisionTimeoutMs: number | undefined;
  /** run --allow-questions; the demo has no ask_user tool. */
  allowQuestions: boolean;
}

/** `allowQuestions`: run's --allow-questions (the demo declares no such option). */
export function readApproval(values: ValuesOf<typeof approvalOptions>, allowQuestions = false): ApprovalArgs {
  if (values.wait && values.noWait) throw new UsageError('--wait and --no-wait contradict each other: give one of them (or neither: wait when stdout is a terminal).');
  return {
    requireApproval: requiredApprovals(values.requireApproval),
    wait: values.noWait ? false : values.wait ? true : undefined,
    decisionTimeoutMs: values.decisionTimeoutMs,
    allowQuestions,
  };
}

/** The names of --require-approval: tool names (checked against the tools by the command), or side-effects. */
export function requiredApprovals(text: string | undefined): string[] | 'side-effects' | undefined {
  if (text === undefined) return undefined;
  const names = text.split(',').map((name) => name.trim());
  if (names.length === 1 && names[0] === 'side-effects') return 'side-effects';
  if (names.includes('side-effects')) throw new UsageError('--require-approval side-effects already covers every tool that is not read-only: give it alone, or give tool names.');
  const bad = names.find((name) => !/^[A-Za-z0-9_-]{1,64}$/.test(name));
  if (bad !== undefined) throw new UsageError(`--require-approval takes tool names separated by commas (write_report,count_words) or side-effects, not "${shorten(text)}".`);
  return [...new Set(names)];
}

/**
 * The flags that say which calls wait for a person, for the resume command a run prints: a new
 * run pins its rule in the journal's header (a bare --resume applies it), but what a resume adds
 * is for that process only, and a run started before the rule was pinned has none.
 */
export function approvalResumeWords(approval: ApprovalArgs, resuming: boolean): string[] {
  if (!resuming) return [];
  const rule = approval.requireApproval;
  return [
    ...(rule === undefined ? [] : ['--require-approval', rule === 'side-effects' ? rule : rule.join(',')]),
    ...(approval.allowQuestions ? ['--allow-questions'] : []),
    ...(approval.decisionTimeoutMs === undefined ? [] : ['--decision-timeout', formatDuration(approval.decisionTimeoutMs)]),
  ];
}
