/** `durable-agent demo`: its options and their parse. */
import { isLang, type Lang, LANGS } from '../../lang/lang.ts';
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { approvalOptions, readApproval } from '../options/approval.ts';
import { budgetOptions, readBudget } from '../options/budget.ts';
import { compactionOptions, readCompaction } from '../options/compaction.ts';
import { claudeOptions, maxTokens, model, readClaude, readRequest, requestOptions } from '../options/model.ts';
import { UsageError } from '../usage-error.ts';
import { shorten } from '../options/read-options.ts';
import { outputOptions } from '../options/output.ts';
import { readStartResume, startResumeOptions } from '../options/start-resume.ts';
import { fileRun, readFileRun, runDir } from '../options/target.ts';
import { traceContent } from '../options/tracing.ts';

const TEN_MINUTES_MS = 600_000;

export const pace = option({
  key: 'paceMs',
  type: 'duration',
  value: 'DURATION',
  help: 'each scripted model reply and tool call takes this long, to watch it or kill it mid-way (100ms, 2s)',
  min: 0,
  max: TEN_MINUTES_MS,
  default: 0,
  bareMilliseconds: true,
});
export const jitter = option({
  key: 'jitterMs',
  type: 'duration',
  value: 'DURATION',
  help: 'and up to this much more, at random',
  min: 0,
  max: TEN_MINUTES_MS,
  default: 0,
  bareMilliseconds: true,
});

export const lang = option({
  key: 'lang',
  type: 'string',
  value: 'LANG',
  help: "the lesson's language, en or pt: its lines and what the run tells the model of a call whose state is unknown",
  defaultText: 'the locale\'s (LC_ALL, LC_MESSAGES or LANG: pt_BR.UTF-8 is pt), else en',
  api: 'RunParts.lang',
});

export const demoSpec = command({
  name: 'demo',
  words: [],
  summary: "the lesson's task with a scripted model (no key): kill it anywhere, resume it",
  description:
    'Runs the task "Turn sales-notes.txt into a short report and write it to report.txt." in DIR with three tools\n' +
    '(read_notes, count_words, write_report), creating sample notes when DIR has none. It uses a scripted model\n' +
    'unless --model names a real one (then ANTHROPIC_API_KEY must be set). Kill it at any moment\n' +
    '(CRASH_AFTER=after-<point>:<n> does it on purpose, see --list-crash-points) and run it again with --resume.',
  options: [
    runDir,
    fileRun,
    ...startResumeOptions,
    model('a real Claude model instead of the scripted one (needs ANTHROPIC_API_KEY)'),
    maxTokens,
    ...budgetOptions,
    ...requestOptions,
    ...claudeOptions,
    ...compactionOptions,
    pace,
    jitter,
    lang,
    option({ key: 'noVerify', type: 'boolean', help: 'write_report offers no verify(): a resume reports its unknown state to the model instead' }),
    option({ key: 'listCrashPoints', type: 'boolean', help: 'print every crash label a whole demo run passes, in order, and exit' }),
    ...approvalOptions,
    ...outputOptions,
    traceContent,
  ],
  examples: [
    'CRASH_AFTER=after-effect-write:3 durable-agent demo --dir demo-run     # killed, exit 137',
    'durable-agent demo --dir demo-run --resume                            # picks it up, exit 0',
    'durable-agent demo --dir demo-run --require-approval write_report --no-wait  # exit 7, waits',
    'durable-agent demo --dir demo-run --lang pt                           # the lesson in Portuguese',
  ],
  parse: (values, { cwd }) => ({
    command: 'demo' as const,
    dir: values.dir ?? cwd,
    runId: readFileRun(values.run),
    ...readStartResume(values),
    model: values.model,
    claude: claudeOfDemo(values, values.model),
    maxTokens: values.maxTokens,
    plain: values.plain,
    verbose: values.verbose,
    listCrashPoints: values.listCrashPoints,
    lang: readLang(values.lang),
    verify: !values.noVerify,
    paceMs: values.paceMs,
    jitterMs: values.jitterMs,
    request: readRequest(values),
    traceContent: values.traceContent,
    approval: readApproval(values),
    budget: readBudget(values),
    ...readCompaction(values),
  }),
});

export type DemoArgs = ReturnType<typeof demoSpec.parse>;

/** --lang as given (undefined: the locale's, chosen where the environment is read). */
function readLang(text: string | undefined): Lang | undefined {
  if (text === undefined || isLang(text)) return text;
  throw new UsageError(`--lang takes ${LANGS.join(' or ')}, not "${shorten(text)}". Without --lang the demo speaks the locale's language (LC_ALL, LC_MESSAGES or LANG: pt_BR.UTF-8 is pt), else en.`);
}

/** The scripted model is asked nothing of the sort: the Claude options need --model. */
function claudeOfDemo(values: Parameters<typeof readClaude>[0] & { resume: boolean }, model: string | undefined): ReturnType<typeof readClaude> {
  const claude = readClaude(values, values.resume);
  if (claude && model === undefined) {
    throw new UsageError('--thinking, --temperature, --tool-choice, --stop-sequences, --service-tier, --api-version, the server tools (--web-search, --web-fetch, --code-execution), --price and --allow-request-change are for a real model: add --model NAME (the scripted demo model takes none).');
  }
  return claude;
}
