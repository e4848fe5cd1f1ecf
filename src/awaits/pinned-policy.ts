/**
 * A run's rule for decisions belongs to the run, not to the process that happens to drive it:
 * it is pinned in the journal header when the run starts, and every resume applies it. A bare
 * `--resume`, or a fleet worker, would otherwise let the next calls run unasked. A resume may
 * add to it (more tools to approve, a shorter deadline) for the time it drives the run; taking
 * anything away needs the person to say so (replaceDecisionPolicy, --replace-decision-policy).
 * The process that drives the run plugs every kind of await in with the rule it applies.
 */
import { needsVersion, type RunSetting, type RunSettings } from '../core/run-settings.ts';
import { JOURNAL_VERSION_DECISIONS, type PinnedDecisionPolicy } from '../store/journal/journal-record.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { askUserTool } from './ask-user.ts';
import { awaitCapability } from './await-capability.ts';
import { type DecisionOptions, formatDecisionTimeout } from './decision-step.ts';
import { PolicyLoosenedError } from './decision-errors.ts';
import { checkDecisionPolicy, type RequireApproval } from './needs-decision.ts';
import { isWaitTool } from './wait-tool.ts';

/** What a process was given: the programmatic options (or the CLI flags behind them). */
export interface GivenDecisionPolicy {
  requireApproval?: RequireApproval | undefined;
  allowQuestions?: boolean | undefined;
  decisionTimeoutMs?: number | undefined;
}

/** What a resume may add: replace the pinned rule instead of joining it. */
export interface GivenOnResume extends GivenDecisionPolicy {
  replaceDecisionPolicy?: boolean | undefined;
}

/** What the awaits are given: the rule, and how this process takes a decision (not pinned: each process gives its own). */
export interface GivenAwaits extends GivenOnResume, Pick<DecisionOptions, 'onDecision' | 'wait'> {
  /** The run queues the runs its calls make for any process to drive: a call that queues its child waits for it. */
  queuesChildren: boolean;
}

/**
 * The rule for decisions as a setting of the run: pinned when it starts (its journal then says
 * that a call may wait: version 2), joined with what each resume gives. Questions allowed offer
 * the model ask_user, so the settings after this one see the tools the run offers.
 */
export const decisionPolicySetting: RunSetting<GivenAwaits> = {
  pin(run, given) {
    checkDecisionTimeout(given.decisionTimeoutMs);
    const decisionPolicy = pinnedPolicyOf(given);
    const offered = withRule(run, given);
    const pinned = decisionPolicy ? { ...offered, pinned: { ...run.pinned, decisionPolicy } } : offered;
    return canNeedDecisions(decisionPolicy, offered.tools) ? needsVersion(pinned, JOURNAL_VERSION_DECISIONS) : pinned;
  },
  check(run, given) {
    checkDecisionTimeout(given.decisionTimeoutMs);
    const applied = effectivePolicy(run.location, run.pinned.decisionPolicy, given, run.tools, given.replaceDecisionPolicy === true);
    return { ...withRule(run, applied), pinned: { ...run.pinned, decisionPolicy: pinnedPolicyOf(applied) } };
  },
  // Waits and child awaits need no rule: the awaits are plugged into every run.
  plug(run, given, parts) {
    const rule = run.pinned.decisionPolicy ?? {};
    const policy = { requireApproval: rule.requireApproval, allowQuestions: rule.allowQuestions === true, queuesChildren: given.queuesChildren };
    return { capability: awaitCapability(parts.registry, policy, { onDecision: given.onDecision, wait: given.wait, decisionTimeoutMs: rule.decisionTimeoutMs }) };
  },
};

/** The run's tools with ask_user when questions are allowed; a rule naming a tool not among them is refused. */
function withRule(run: RunSettings, rule: GivenDecisionPolicy): RunSettings {
  const tools = rule.allowQuestions ? [...run.tools, askUserTool] : run.tools;
  checkDecisionPolicy({ requireApproval: rule.requireApproval, allowQuestions: rule.allowQuestions === true }, tools);
  return { ...run, tools };
}

function checkDecisionTimeout(timeout: number | undefined): void {
  if (timeout !== undefined && !(Number.isSafeInteger(timeout) && timeout > 0)) {
    throw new RangeError(`decisionTimeoutMs must be a whole number of milliseconds above 0 (got ${String(timeout)}); nothing was started.`);
  }
}

/** The rule pinned in a new run's header; undefined when nothing in it can need a decision. */
export function pinnedPolicyOf(given: GivenDecisionPolicy): PinnedDecisionPolicy | undefined {
  const pinned: PinnedDecisionPolicy = {};
  if (given.requireApproval !== undefined) pinned.requireApproval = given.requireApproval === 'side-effects' ? 'side-effects' : [...given.requireApproval];
  if (given.allowQuestions) pinned.allowQuestions = true;
  if (given.decisionTimeoutMs !== undefined) pinned.decisionTimeoutMs = given.decisionTimeoutMs;
  return Object.keys(pinned).length > 0 ? pinned : undefined;
}

/**
 * True when a call of this run can wait for a person: its journal may then hold `needs` flags
 * and decisions, which a release before decisions existed would ignore (it would run the call
 * unasked), so the journal is written as version 2, which such a release refuses.
 */
export function canNeedDecisions(pinned: PinnedDecisionPolicy | undefined, tools: readonly ToolDefinition[]): boolean {
  return pinned !== undefined || tools.some((tool) => (tool.needsApproval !== undefined && tool.needsApproval !== false) || isWaitTool(tool));
}

/**
 * The rule this process applies: the pinned one joined with what it was given (the stricter of
 * each), or, with `replace`, exactly what it was given. A given deadline longer than the pinned
 * one would loosen the rule: refused (PolicyLoosenedError) unless `replace`.
 */
export function effectivePolicy(
  location: string,
  pinned: PinnedDecisionPolicy | undefined,
  given: GivenDecisionPolicy,
  tools: readonly ToolDefinition[],
  replace: boolean,
): GivenDecisionPolicy {
  if (!pinned || replace) return given;
  const timeout = stricterTimeout(location, pinned.decisionTimeoutMs, given.decisionTimeoutMs);
  return {
    requireApproval: joinedRule(pinned.requireApproval, given.requireApproval, tools),
    allowQuestions: pinned.allowQuestions === true || given.allowQuestions === true,
    decisionTimeoutMs: timeout,
  };
}

function stricterTimeout(location: string, pinned: number | undefined, given: number | undefined): number | undefined {
  if (pinned === undefined) return given;
  if (given === undefined || given <= pinned) return given ?? pinned;
  throw new PolicyLoosenedError(location, `its decision deadline is ${formatDecisionTimeout(pinned)}, and this resume gives ${formatDecisionTimeout(given)}`);
}

/** Both rules at once: a call any of them names needs approval. */
function joinedRule(pinned: RequireApproval | undefined, given: RequireApproval | undefined, tools: readonly ToolDefinition[]): RequireApproval | undefined {
  if (pinned === undefined) return given;
  if (given === undefined) return pinned;
  if (pinned === 'side-effects' && given === 'side-effects') return 'side-effects';
  const names = new Set<string>();
  for (const rule of [pinned, given]) {
    const listed = rule === 'side-effects' ? tools.filter((tool) => !tool.readOnly).map((tool) => tool.name) : rule;
    for (const name of listed) names.add(name);
  }
  return [...names];
}

/** Words for the rule, for the commands and messages that show it. */
export function policyWords(policy: PinnedDecisionPolicy | undefined): string {
  if (!policy) return 'none';
  const parts: string[] = [];
  const rule = policy.requireApproval;
  if (rule !== undefined) parts.push(`approval for ${rule === 'side-effects' ? 'every tool that is not read-only' : rule.join(', ')}`);
  if (policy.allowQuestions) parts.push('questions allowed');
  if (policy.decisionTimeoutMs !== undefined) parts.push(`decisions due within ${formatDecisionTimeout(policy.decisionTimeoutMs)}`);
  return parts.join('; ') || 'none';
}
