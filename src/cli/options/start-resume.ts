/** Starting a run or resuming the stored one, and what a resume may be allowed to go on with. */
import { UsageError } from '../usage-error.ts';
import { option, type ValuesOf } from './option.ts';

const MAX_TURNS_LIMIT = 100_000;

export const resume = option({ key: 'resume', type: 'boolean', help: 'go on with the run stored in DIR, from its last checkpoint' });
export const message = option({
  key: 'message',
  type: 'string',
  value: 'TEXT',
  help: "with --resume on a done run: continue the conversation with this user message (the run's MAX_TURNS stays its total)",
  api: 'ResumeOptions.message',
});
export const fresh = option({ key: 'fresh', type: 'boolean', help: 'start over: an unfinished run in DIR is moved to .durable-agent/archive/ (never deleted)', api: 'StartOptions.fresh' });
export const takeOver = option({
  key: 'takeOver',
  type: 'boolean',
  help: "take the run's lock at once from the process that holds it (e.g. one on a host that is gone); the holder is printed",
  api: 'RunParts.takeOver',
});
export const acceptLostRecord = option({
  key: 'acceptLostRecord',
  type: 'boolean',
  help: 'with --resume: go on although the journal lost its last committed record (that step may be done again)',
  api: 'ResumeOptions.acceptLostRecord',
});
export const allowToolChange = option({
  key: 'allowToolChange',
  type: 'boolean',
  help: 'with --resume: go on although the run was started with other tools (by another command)',
  api: 'ResumeOptions.allowToolChange',
});
export const replaceDecisionPolicy = option({
  key: 'replaceDecisionPolicy',
  type: 'boolean',
  help:
    'with --resume: the --require-approval, --allow-questions and --decision-timeout given now replace the rule the run ' +
    'started with (kept in its journal; without this a resume applies it, adding what is given)',
  api: 'ResumeOptions.replaceDecisionPolicy',
});
export const maxTurns = option({
  key: 'maxTurns',
  type: 'integer',
  value: 'N',
  help: 'stop cleanly (exit 5) after N tool-using turns; a resume with a larger N goes on',
  min: 1,
  max: MAX_TURNS_LIMIT,
  defaultText: "20; a resume keeps the run's",
  api: 'StartOptions.maxTurns',
});

export const startResumeOptions = [resume, message, fresh, takeOver, acceptLostRecord, allowToolChange, replaceDecisionPolicy, maxTurns] as const;

export interface StartResumeArgs {
  resume: boolean;
  /** --message: with --resume, the user's next message to a done run. */
  message: string | undefined;
  fresh: boolean;
  takeOver: boolean;
  acceptLostRecord: boolean;
  allowToolChange: boolean;
  replaceDecisionPolicy: boolean;
  /** A new run's MAX_TURNS, or the total a resume raises it to; undefined: 20, or the run's. */
  maxTurns: number | undefined;
}

/** What demo and run share: starting or resuming, and the resume-only permissions. */
export function readStartResume(values: ValuesOf<typeof startResumeOptions>): StartResumeArgs {
  const { resume } = values;
  if (resume && values.fresh) throw new UsageError('--resume and --fresh contradict each other: resume the run, or discard it and start over.');
  for (const [flag, given] of [['accept-lost-record', values.acceptLostRecord], ['allow-tool-change', values.allowToolChange], ['replace-decision-policy', values.replaceDecisionPolicy]] as const) {
    if (given && !resume) throw new UsageError(`--${flag} only applies to --resume: it lets a resume go on with a stored run. Add --resume, or drop --${flag}.`);
  }
  return {
    resume,
    message: continueMessage(values.message, resume),
    fresh: values.fresh,
    takeOver: values.takeOver,
    acceptLostRecord: values.acceptLostRecord,
    allowToolChange: values.allowToolChange,
    replaceDecisionPolicy: values.replaceDecisionPolicy,
    maxTurns: values.maxTurns,
  };
}

/** --message continues a done run: only with --resume, and never empty. */
function continueMessage(message: string | undefined, resume: boolean): string | undefined {
  if (message === undefined) return undefined;
  if (!resume) throw new UsageError('--message continues a finished run: add --resume (a new run takes its first message with --task).');
  return nonEmptyMessage(message);
}

export function nonEmptyMessage(message: string): string {
  if (message.trim() === '') throw new UsageError('--message is empty: give the text the model should answer, e.g. --message "Now add a summary line".');
  return message;
}
