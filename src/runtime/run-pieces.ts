/**
 * A start's or a resume's options taken apart, once, where they come in: each part of the run is
 * handed its own piece and none the whole. Each setting gets its own fields under its name (the
 * rule for decisions with how this process takes a decision, the budget, the context, the
 * agent...), the tracing its tracer, the driver's parts the options a process gives for itself,
 * the machine its task; the store, the model and the tools as given go to those that name them.
 */
import type { Model } from '../model/model.ts';
import type { CalledBy } from '../store/journal/journal-record.ts';
import type { RunStore } from '../store/store.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import type { SettingsGiven } from './pinned-settings.ts';
import { API_COMMAND } from './run-origin.ts';
import type { ResumeOptions, RunParts, StartOptions, TaskOptions } from './run-options.ts';
import type { DriverOptions } from './run-parts.ts';
import type { TracingOptions } from './traced-run.ts';

/** What the pieces of a start and of a resume share. */
export interface RunPieces {
  store: RunStore;
  /** As given: the settings resolve the model the run asks, with the context edits it pinned (pinned-settings.ts). */
  model: Model;
  /** As given: the settings add theirs (ask_user) to the tools the run offers. */
  tools: readonly ToolDefinition[];
  /** What drives the run ('api' for a program that does not say): kept in the header with the model and the tools. */
  command: string;
  /** The file the run's agent was loaded from, when a command loaded it from one: kept in the header with the command. */
  agentsModule: string | undefined;
  /** Each setting's own piece, under its name (pinned-settings.ts). */
  settings: SettingsGiven;
  tracing: TracingOptions;
  driver: DriverOptions;
  /** Take the run's lock at once, whoever holds it. */
  takeOver: boolean;
}

export interface StartPieces extends RunPieces {
  task: TaskOptions;
  /** The id asked for, if any (attach-run.ts: runIdOf). */
  runId: string | undefined;
  /** Archive what the store holds and start anew (fresh, or ifExists 'new'), instead of attaching or refusing. */
  startOver: boolean;
}

/** What a resume asks beyond the run's own (ResumeOptions says what each does). */
export interface ResumeAsked {
  maxTurns: number | undefined;
  message: string | undefined;
  acceptLostRecord: boolean;
  allowToolChange: boolean;
  keepPause: boolean;
}

export interface ResumePieces extends RunPieces, ResumeAsked {}

export function startPiecesOf(options: StartOptions): StartPieces {
  const { task, system, maxTurns, maxPausesInARow } = options;
  return {
    ...runPiecesOf(options, { calledBy: options.calledBy, tenant: options.tenant }, undefined),
    task: { task, system, maxTurns, maxPausesInARow },
    runId: options.runId,
    startOver: options.fresh === true || options.ifExists === 'new',
  };
}

export function resumePiecesOf(options: ResumeOptions): ResumePieces {
  return {
    ...runPiecesOf(options, { calledBy: undefined, tenant: undefined }, options.replaceDecisionPolicy, options.liftTenantQuota === true),
    maxTurns: options.maxTurns,
    message: options.message,
    acceptLostRecord: options.acceptLostRecord === true,
    allowToolChange: options.allowToolChange === true,
    keepPause: options.keepPause === true,
  };
}

/** A start that finds its run unfinished resumes it as a plain resume would, with the turns it was given. */
export function attachedResume(start: StartPieces): ResumePieces {
  return { ...start, maxTurns: start.task.maxTurns, message: undefined, acceptLostRecord: false, allowToolChange: false, keepPause: false };
}

/** `started`: a start's own (whose the run is, and the call that started a child run); `replaceDecisionPolicy`: a resume's own. */
function runPiecesOf(options: RunParts, started: { calledBy: CalledBy | undefined; tenant: string | undefined }, replaceDecisionPolicy: boolean | undefined, liftTenantQuota = false): RunPieces {
  const { calledBy, tenant } = started;
  const { store, model, agent, requireApproval, allowQuestions, decisionTimeoutMs, onDecision, wait, compaction, clearToolUses, childRuns } = options;
  const { signal, observer, inspect, toolTimeoutMs, toolConcurrency, maxTokens, snapshotEvery, crashAfter, onCrash, crashPoints, lang } = options;
  const awaits = { requireApproval, allowQuestions, decisionTimeoutMs, replaceDecisionPolicy, onDecision, wait, queuesChildren: childRuns !== undefined };
  return {
    store,
    model,
    tools: options.tools,
    command: options.command ?? API_COMMAND,
    agentsModule: options.agentsModule,
    settings: { agent, awaits, budget: { budget: options.budget, model, ...(liftTenantQuota ? { liftTenantQuota } : {}) }, context: { compaction, clearToolUses, model }, childAwaits: childRuns !== undefined, calledBy, tenant, model },
    tracing: { tracer: options.tracer, traceContent: options.traceContent, traceParent: options.traceParent },
    driver: { store, signal, observer, inspect, toolTimeoutMs, toolConcurrency, maxTokens, snapshotEvery, childRuns, lang, limits: options.limits, crash: { crashAfter, onCrash, crashPoints } },
    takeOver: options.takeOver === true,
  };
}
