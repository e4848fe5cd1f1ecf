/**
 * `durable-agent approve`, `deny` and `answer`: a decision for one call of the run of DIR (or of
 * a run under it). They read the journal without a lock and write only the decision's inbox
 * file, so they work while the run waits in another process. (`pending` is commands/pending.ts.)
 */
import { decide, type DecideInput } from '../../awaits/decide.ts';
import type { InboxPoint } from '../../store/open-store.ts';
import type { FolderRunStore } from '../../store/store.ts';
import type { JournalHeader } from '../../store/journal/journal-record.ts';
import type { ToolDefinition } from '../../tools/tool.ts';
import type { DecideArgs } from '../args.ts';
import { UsageError } from '../usage-error.ts';
import { runDirOf } from '../run-dir.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';
import { readRunStatus } from '../../runtime/run-status.ts';
import { deciderOf } from '../../runtime/tree-decisions.ts';
import { DecisionRefusedError } from '../../awaits/decision-errors.ts';
import { verdictWords } from '../../awaits/decision-trail.ts';
import type { Decision } from '../../../machines/agent-loop.types.ts';
import { resumeCommandOf } from '../resume-command.ts';
import { fileStoreOf } from '../run-store.ts';
import { userName } from '../user-name.ts';

const VERDICT: Record<DecideArgs['command'], DecideInput['verdict']> = { approve: 'approved', deny: 'denied', answer: 'answered' };

/** `store`: the run's store (tests pass one whose inbox write they interleave with a run). */
export async function decideCommand(args: DecideArgs, env: NodeJS.ProcessEnv, writers: Writers, given?: FolderRunStore): Promise<number> {
  const dir = runDirOf(args.dir);
  const named = given ?? fileStoreOf(dir, args.fileRun, { writeFaults: env.DURABLE_AGENT_FAIL_WRITE, onDecisionPoint: crashPointsOf(env.CRASH_AFTER) });
  const request = decideInputOf(args);
  // A call a sub-agent run under this one waits on is decided in that run's inbox.
  const store = (await deciderOf(named, request)) as FolderRunStore;
  const tools = args.input === undefined ? undefined : await toolsOf(store, dir);
  const decision = await decide(store, request, { tools });
  // The run may have recorded a decision of its own (a deadline) between the check and the
  // write: read again, so that what is printed is what holds.
  const status = await readRunStatus(store);
  const recorded = status.decided.find((call) => call.tool_use_id === decision.tool_use_id);
  if (recorded && !sameDecision(recorded, decision)) {
    await store.decisions.settle(decision.tool_use_id);
    throw new DecisionRefusedError(
      'already-decided',
      decision.tool_use_id,
      `${decision.tool_use_id} (${recorded.name}) was ${verdictWords(recorded)} at ${new Date(recorded.at).toISOString()} (record ${recorded.seq}), ` +
        `just before this decision reached the inbox: that decision holds, this one was not used and is removed from the inbox.`,
    );
  }
  const name = recorded?.name ?? status.waiting.find((call) => call.tool_use_id === decision.tool_use_id)?.name ?? 'the call';
  writers.out(givenLine(decision, name));
  if (recorded) {
    writers.out(`The run has taken it up already: recorded in record ${recorded.seq}.`);
    return EXIT.done;
  }
  writers.out(
    'Written to the run’s inbox; the run takes it up and records it: a run that waits within a second, a run that stopped (exit 7) when ' +
      `resumed with the command it printed (${resumeHintOf(env, dir, (await store.load()).header, args.fileRun)}). ` +
      'A decision deadline that passes before this decision was given denies the call instead; `durable-agent status` shows what was recorded.',
  );
  return EXIT.done;
}

/** The decision asked for on the command line, for decide() (shared with the fleet's commands). */
export function decideInputOf(args: DecideArgs): DecideInput {
  const request: DecideInput = { tool_use_id: args.callId, verdict: VERDICT[args.command], by: args.by ?? userName() };
  if (args.note !== null) request.note = args.note;
  if (args.reason !== null) request.reason = args.reason;
  if (args.text !== null) request.text = args.text;
  if (args.input !== undefined) request.input = args.input;
  return request;
}

/** `[given] toolu_03 write_report approved by ana (note: fine)`: what approve, deny and answer wrote. */
export function givenLine(decision: Decision, name: string): string {
  return `[given] ${decision.tool_use_id} ${name} ${verdictWords(decision)}`;
}

/** The command that resumes a stopped run; a run whose decision policy is not pinned needs its flags again. */
function resumeHintOf(env: NodeJS.ProcessEnv, dir: string, header: JournalHeader, runId: string | null): string {
  return `${resumeCommandOf(env, dir, header, runId)}${header.decisionPolicy ? '' : ' plus the --require-approval it was given'}`;
}

function sameDecision(recorded: Decision, given: Decision): boolean {
  return recorded.verdict === given.verdict && recorded.by === given.by && recorded.at === given.at;
}


/**
 * The tools of a run this command line started, for the check of an edited input (the journal
 * pins their schemas; a tool whose schema differs is not used).
 */
async function toolsOf(store: FolderRunStore, dir: string): Promise<ToolDefinition[] | undefined> {
  const { header } = await store.load();
  const origin = header.startedBy;
  // An agent's tools are in the module it was loaded from (its journal names it).
  if (header.agent && origin?.agentsModule !== undefined) {
    const { loadAgents } = await import('../agents-module.ts');
    const agents = await loadAgents(origin.agentsModule, process.cwd());
    return agents.find((agent) => agent.name === header.agent!.name)?.tools.slice();
  }
  if (origin?.command === 'demo') return (await import('../../demo/demo-tools.ts')).demoTools(dir);
  if (origin?.command === 'run') {
    const { toolSetsOfRun, toolsOfSets } = await import('../run-tools.ts');
    return toolsOfSets(dir, toolSetsOfRun(origin.tools));
  }
  return undefined;
}



const INBOX_POINTS: readonly InboxPoint[] = ['decision-temp', 'decision-link'];

/**
 * Drills: CRASH_AFTER=after-decision-temp:1 (the decision written under its temporary name) or
 * after-decision-link:1 (linked to its name, the directory not yet synced) kills this process
 * there with SIGKILL, to check that a kill leaves no decision or a whole one.
 */
function crashPointsOf(spec: string | undefined): ((point: InboxPoint) => void) | undefined {
  if (spec === undefined || spec === '') return undefined;
  const point = /^after-(decision-temp|decision-link):1$/.exec(spec)?.[1] as InboxPoint | undefined;
  if (!point) throw new UsageError(`CRASH_AFTER=${spec} names no point of a decision's write: use ${INBOX_POINTS.map((p) => `after-${p}:1`).join(' or ')}.`);
  return (passed) => {
    if (passed === point) process.kill(process.pid, 'SIGKILL');
  };
}
