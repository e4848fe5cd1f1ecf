/**
 * A run's history read from its journal: one step per persisted transition, with the context
 * as of that step, which process wrote it, where a process stopped and how the next one
 * settled the calls it found open. Pure: it folds a loaded journal and touches nothing.
 */
import { announcedEffectOf } from '../machines/agent-loop.effects.ts';
import { openCalls } from '../machines/agent-loop.logic.ts';
import type { AgentContext, AgentStateName, ContentBlock, Message, ToolResultContent } from '../machines/agent-loop.types.ts';
import { isFinishedState, isStoppedAtLimit } from '../machines/agent-loop.types.ts';
import { type DecidedCall, DecisionTrail, verdictWords } from '../src/awaits/decision-trail.ts';
import { EN } from '../src/lang/en.ts';
import { isServerToolResult, resultToolName, sealedWords, serverToolResultWords, serverToolUseWords, thinkingWords, withoutSealed } from '../src/words/block-words.ts';
import { blockWords, resultContentWords } from '../src/words/payload-words.ts';
import { foldJournal } from '../src/store/journal/fold-journal.ts';
import type { JournalRecord } from '../src/store/journal/journal-record.ts';
import { pointOf } from '../src/store/journal/record-points.ts';
import type { LoadedRun } from '../src/store/store.ts';
import type { MachineGraph } from './machine-graph.ts';
import { edgeId, edgesOf } from './machine-graph.ts';
import type { BlockView, DecisionView, LedgerEntryView, MessageView, ProcessView, ReconcileView, RunView, StepView } from './viz-data.ts';

/** What the page says about forks: the runs forked from this one, and the command that forks a step. */
export interface ForkViews {
  forks?: RunView['forks'] | undefined;
  forkCommand?: RunView['forkCommand'] | undefined;
}

export function runViewOf(location: string, loaded: LoadedRun, graph: MachineGraph, fork: ForkViews = {}): RunView {
  // The events that move along each arrow: one taken in place (MODEL_USAGE) leaves the record without an arrow.
  const edges = new Map(edgesOf(graph).map((edge) => [edge.id, new Set(edge.transitions.filter((t) => !t.targetless).map((t) => t.event))]));
  const messageIndex = new Map<Message, number>();
  const messages: MessageView[] = [];
  const ledgerOrder: string[] = [];
  const ledgerFirstSeq = new Map<string, number>();
  const steps: StepView[] = [];
  const processes: ProcessView[] = [];
  let previous: StepView | null = null;
  const trail = new DecisionTrail();
  const decisionViews = new Map<string, DecisionView>();

  const final = foldJournal(location, loaded, (view, stored) => {
    const { record } = stored;
    const context = view.context;
    const known = trail.decided.length;
    trail.add(record, context);
    const decided = trail.decided.slice(known).map(decisionViewOf);
    for (const decision of decided) decisionViews.set(decision.toolUseId, decision);
    const verdicts = new Map(context.decisions.map((decision) => [decision.tool_use_id, decision.verdict]));
    if (record.note?.resumed || processes.length === 0) {
      const resumed = record.note?.resumed;
      const pid = resumed?.pid ?? record.note?.started?.pid ?? null;
      // The process before ended where its last record left the run: at rest in a final state, at
      // a limit (a run reopened with more turns or budget), waiting for a person, or anywhere else,
      // stopped by a kill, crash or error.
      // In a forked run, the process that wrote the fork point did not stop there: the fork took its records.
      const before = processes[processes.length - 1];
      const forkedAt = loaded.header.forkedFrom?.seq;
      if (before && previous) before.end = forkedAt !== undefined && before.firstSeq <= forkedAt ? 'forked' : endOf(previous.state);
      processes.push({
        pid,
        firstSeq: record.seq,
        lastSeq: record.seq,
        resume: resumed ? { fromSeq: resumed.fromSeq, cutEnd: resumed.cutEnd, decisions: [] } : null,
        end: 'open',
      });
    }
    const process = processes.length - 1;
    processes[process]!.lastSeq = record.seq;

    const ledgerWritten = (record.results?.add ?? []).map((outcome) => outcome.tool_use_id);
    for (const id of ledgerWritten) {
      if (!ledgerFirstSeq.has(id)) {
        ledgerFirstSeq.set(id, record.seq);
        ledgerOrder.push(id);
      }
    }
    const recorded = new Set(context.results.map((outcome) => outcome.tool_use_id));
    const note = record.note;
    const step: StepView = {
      seq: record.seq,
      at: record.at,
      point: pointOf(record),
      state: record.state,
      event: record.event,
      turn: context.turn,
      maxTurns: context.maxTurns,
      bytes: stored.bytes,
      tools: toolsOf(record, context, previous),
      edge: previous ? takenEdge(edges, previous.state, record) : null,
      messageEdit: record.messages ? { from: record.messages.from, add: context.messages.slice(record.messages.from).map(intern) } : null,
      pending: context.pending.map((call) => ({
        id: call.id,
        name: call.name,
        input: jsonText(call.input),
        recorded: recorded.has(call.id),
        needs: call.needs ?? null,
        verdict: verdicts.get(call.id) ?? null,
      })),
      ledgerSize: view.ledger.size,
      ledgerWritten,
      next: record.event === 'MODEL_USAGE' ? USAGE_COUNTED : nextEffectOf(record.state, context),
      usage: context.usage,
      process,
      reconcile: note?.reconcile
        ? { toolUseId: note.reconcile.tool_use_id, name: note.reconcile.name, decision: note.reconcile.decision, phrase: EN.reconcile[note.reconcile.decision], seq: record.seq }
        : null,
      reused: (note?.reused ?? []).map((reuse) => ({
        toolUseId: reuse.tool_use_id,
        name: reuse.name,
        decision: reuse.decision,
        phrase: EN.reconcile[reuse.decision],
        seq: null,
      })),
      reopened: note?.reopened ?? null,
      waiting: waitViewOf(context),
      decided,
      turnDecisions: context.decisions.flatMap((decision) => decisionViews.get(decision.tool_use_id) ?? []),
    };
    steps.push(step);
    previous = step;
  });

  const lastProcess = processes[processes.length - 1]!;
  // A run stopped at a limit is not finished: a resume with more leaves the state.
  const finished = isFinishedState(final.state);
  const restsAt = endOf(final.state);
  lastProcess.end = restsAt === 'stopped' ? 'open' : restsAt;
  for (const process of processes) if (process.resume) process.resume.decisions = resumeDecisions(process, steps);

  return {
    runId: loaded.header.runId,
    location,
    task: final.context.task,
    state: final.state,
    finished,
    turn: final.context.turn,
    maxTurns: final.context.maxTurns,
    journalBytes: loaded.totalBytes,
    finalText: final.context.finalText,
    failure: final.context.failure?.message ?? null,
    tornTail: loaded.tornTail && { offset: loaded.tornTail.offset, bytes: loaded.tornTail.bytes },
    messages,
    ledger: ledgerOrder.map((id): LedgerEntryView => {
      const outcome = final.ledger.get(id)!;
      return { toolUseId: id, name: outcome.name, kind: outcome.kind, isError: outcome.is_error, content: contentText(outcome.content), seq: ledgerFirstSeq.get(id)! };
    }),
    steps,
    processes,
    forkedFrom: loaded.header.forkedFrom ? { runId: loaded.header.forkedFrom.runId, seq: loaded.header.forkedFrom.seq, location: loaded.header.forkedFrom.location } : null,
    forks: fork.forks ?? [],
    calledBy: loaded.header.calledBy ? { runId: loaded.header.calledBy.runId, toolUseId: loaded.header.calledBy.toolUseId } : null,
    subagents: [],
    forkCommand: fork.forkCommand ?? null,
  };

  function intern(message: Message): number {
    // The fold keeps earlier messages as the same objects: a message is turned into text once.
    let index = messageIndex.get(message);
    if (index === undefined) {
      index = messages.length;
      messages.push(messageViewOf(message));
      messageIndex.set(message, index);
    }
    return index;
  }
}

/**
 * How a resuming process settled the turn it found open, as the journal notes it: a decision
 * that needed a write in that record's reconcile note, a ledger hit reused (nothing to write)
 * on the next record the process wrote. Should a process have stopped before writing anything
 * more, a recorded call is still a reuse by the reconcile rule.
 */
function resumeDecisions(process: ProcessView, steps: readonly StepView[]): ReconcileView[] {
  const before = steps[process.resume!.fromSeq];
  if (!before || (before.state !== 'pendingTool' && before.state !== 'effectRecorded')) return [];
  const ours = steps.filter((step) => step.seq >= process.firstSeq && step.seq <= process.lastSeq);
  const decisions: ReconcileView[] = [];
  for (const call of before.pending) {
    const written =
      ours.find((step) => step.reconcile?.toolUseId === call.id)?.reconcile ??
      ours.flatMap((step) => step.reused).find((reuse) => reuse.toolUseId === call.id);
    if (written) decisions.push(written);
    else if (call.recorded) decisions.push({ toolUseId: call.id, name: call.name, decision: 'reused', phrase: EN.reconcile.reused, seq: null });
  }
  return decisions;
}

function decisionViewOf(call: DecidedCall): DecisionView {
  return {
    toolUseId: call.tool_use_id,
    name: call.name,
    verdict: call.verdict,
    by: call.by,
    at: call.at,
    words: verdictWords({ ...call, input: undefined }),
    reason: call.reason ?? null,
    note: call.note ?? null,
    input: call.input === undefined ? null : jsonText(call.input),
    text: call.text ?? null,
    since: call.since,
    waitedMs: call.waitedMs,
    seq: call.seq,
  };
}

function waitViewOf(context: AgentContext): StepView['waiting'] {
  const awaiting = context.awaiting;
  const call = awaiting ? context.pending.find((pending) => pending.id === awaiting.tool_use_id) : undefined;
  return awaiting && call?.needs ? { toolUseId: call.id, name: call.name, needs: call.needs, since: awaiting.since } : null;
}

/** How a process that left the run in `state` ended (one that another process took up after). */
function endOf(state: AgentStateName): ProcessView['end'] {
  if (isFinishedState(state)) return 'finished';
  if (isStoppedAtLimit(state)) return 'limit';
  return state === 'awaitingDecision' ? 'waiting' : 'stopped';
}

function takenEdge(edges: Map<string, Set<string>>, from: AgentStateName, record: JournalRecord): string | null {
  // A REOPEN is the process taking the run up: shown with that process (the step's `reopened`), not as the run's own move.
  if (record.event === 'REOPEN') return null;
  const id = edgeId(from, record.state);
  return edges.get(id)?.has(record.event) ? id : null;
}

function toolsOf(record: JournalRecord, context: AgentContext, previous: StepView | null): string[] {
  switch (record.event) {
    case 'TOOL_RESULT':
      return (record.results?.add ?? []).map((outcome) => outcome.name);
    case 'MODEL_REPLY':
      return record.state === 'pendingTool' ? context.pending.map((call) => call.name) : [];
    case 'CLOSE_TURN':
      // Closing empties the turn's calls: name the ones it closed.
      return previous?.pending.map((call) => call.name) ?? [];
    case 'DECISION_NEEDED': {
      const awaited = context.pending.find((call) => call.id === context.awaiting?.tool_use_id);
      return awaited ? [awaited.name] : [];
    }
    case 'DECISION':
      return (record.decisions?.add ?? []).map((decision) => context.pending.find((call) => call.id === decision.tool_use_id)?.name ?? decision.tool_use_id);
    default:
      return [];
  }
}

/** A MODEL_USAGE record counts a reply's tokens before the reply itself is saved (the call is still under way). */
const USAGE_COUNTED = 'save the reply whose tokens this record counted (a resume from here asks the model again)';

function nextEffectOf(state: AgentStateName, context: AgentContext): string | null {
  switch (announcedEffectOf(state, context)) {
    case 'requestModelReply':
      return context.heldReply && state === 'awaitingModel' ? 'act on the held reply' : 'ask the model';
    case 'runPendingTools': {
      const call = openCalls(context)[0]!;
      return `run ${call.name} (${call.id}), then write its ledger entry`;
    }
    case 'requestTurnClose':
      return "close the turn: put its tool_results in messages (checkpoint B)";
    case 'awaitDecision': {
      const call = context.pending.find((pending) => pending.id === context.awaiting?.tool_use_id);
      const what = call?.needs === 'answer' ? "a person's answer to" : "a person's decision about";
      return call ? `wait for ${what} ${call.name} (${call.id}), then record it` : "wait for a person's decision";
    }
    case 'requestCompaction':
      return 'ask the model to summarise the older turns, then put the summary in their place';
    case null:
      if (state === 'stoppedAtMaxTurns') return 'nothing until a resume gives more turns; then act on the held reply';
      if (state === 'stoppedAtBudget') return 'nothing until a resume gives a larger budget; then ask the model';
      return null;
  }
}

function messageViewOf(message: Message): MessageView {
  const content: ContentBlock[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  return { role: message.role, blocks: content.map(blockViewOf) };
}

function blockViewOf(block: ContentBlock): BlockView {
  switch (block.type) {
    case 'text':
      return { kind: 'text', text: String(block.text ?? '') };
    case 'tool_use':
      return { kind: 'tool_use', id: String(block.id), name: String(block.name), input: jsonText(block.input) };
    case 'tool_result':
      return {
        kind: 'tool_result',
        toolUseId: String(block.tool_use_id),
        content: contentText(block.content as ToolResultContent),
        isError: block.is_error === true,
      };
    case 'thinking':
    case 'redacted_thinking':
      return {
        kind: 'thinking',
        redacted: block.type === 'redacted_thinking',
        text: typeof block.thinking === 'string' ? block.thinking : '',
        summary: thinkingWords(block),
        sealed: sealedWords(block),
      };
    case 'server_tool_use':
      return { kind: 'server_tool_use', id: String(block.id), name: String(block.name), summary: serverToolUseWords(block), input: jsonText(block.input) };
    default:
      if (isServerToolResult(block)) {
        return {
          kind: 'server_tool_result',
          type: block.type,
          toolUseId: String(block.tool_use_id),
          tool: resultToolName(block),
          summary: serverToolResultWords(block),
          json: jsonText(withoutSealed(block)),
        };
      }
      // An image or a document in words ([image image/png 1.0 MB]): the page never holds a payload's base64.
      return { kind: 'other', type: block.type, json: blockWords(block) };
  }
}

function contentText(content: ToolResultContent): string {
  return resultContentWords(content);
}

function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'undefined';
}
