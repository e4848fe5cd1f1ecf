/**
 * A run's events in words, one line each: the lesson's lines, the details under --verbose and
 * the closing line. The plain log, the live view and the visualizer all say it this way.
 */
import { requestWords } from '../control/control-request.ts';
import type { LessonWords } from '../lang/lesson-words.ts';
import type { RunEvent, RunResult } from '../core/run-events.ts';
import { budgetReachedWords, largerBudgetWords } from '../budget/budget-words.ts';
import { replyBlockLines } from './block-words.ts';
import { type DecisionCommands, decidedLine, decisionHintLines, waitingLine } from './decision-lines.ts';

export interface Writers {
  out(line: string): void;
  err(line: string): void;
  /** The stream out() writes to, when it is the process's own stdout: a terminal there may show the TUI. */
  terminal?: NodeJS.WriteStream;
}

/**
 * The stdout line for an event, if it has one: the lesson's lines in `words`' language (the
 * checkpoint lines are tags and names only, the same in every language).
 */
export function plainLine(event: RunEvent, words: LessonWords): string | null {
  switch (event.type) {
    case 'saved':
      if (event.point === 'save-a') return `[turn ${event.turn}][save A] pending=${event.pending.map((c) => c.name).join(',')}`;
      if (event.point === 'save-b') return event.closesResumedTurn ? words.saveBAfterResume(event.turn, event.recordedIds.length) : `[turn ${event.turn}][save B]`;
      if (event.point === 'save-compacted') return `[turn ${event.turn}][compacted] a summary replaced the older turns (context compacted)`;
      return null;
    case 'resumed':
      return words.resumed(event.turn, event.pending.map((c) => c.name));
    case 'reconciled':
      return `[resume][reconcile] tool_use_id=${event.call.id} name=${event.call.name} ${words.reconcile[event.decision]}`;
    case 'waiting':
      return waitingLine(event);
    case 'decided':
      return decidedLine(event);
    case 'finished':
      return resultLine(event.result);
    default:
      return null;
  }
}

/** The lines of a whole reply's thinking and server tool blocks (stdout), one each: none for a reply without them. */
export function replyLines(event: RunEvent): string[] {
  return event.type === 'model-reply' ? replyBlockLines(event.reply.content) : [];
}

/** Lines after an event's own: the commands that decide a waiting call, or resume a run that stopped for one. */
export function commandLines(event: RunEvent, commands: DecisionCommands | null | undefined): string[] {
  if (!commands) return [];
  if (event.type === 'waiting') return decisionHintLines(commands, { tool_use_id: event.call.id, needs: event.needs, input: event.call.input, since: event.since });
  if (event.type === 'finished' && event.result.status === 'waiting') return [`  resume:  ${commands.resume}`];
  const stop = event.type === 'finished' ? event.result.budgetStop : undefined;
  if (stop) return [`  resume:  ${commands.resume} ${largerBudgetWords(stop).join(' ')}`];
  return [];
}

export function resultLine(result: RunResult): string {
  switch (result.status) {
    case 'done':
      return `[done] ${result.text ?? ''}`;
    case 'stoppedAtMaxTurns':
      return (
        `[stop] reached MAX_TURNS=${result.maxTurns} at turn ${result.turn}; the run is saved. ` +
        `Resume with --resume --max-turns ${result.maxTurns + 10} (any number above ${result.turn}) to go on.`
      );
    case 'failed':
      return `[failed] ${result.failure?.message ?? 'the run failed'}`;
    case 'waiting':
      // A wait goes on by itself once its time or its event comes: a resume before then waits the rest.
      if ((result.waiting ?? []).some((call) => call.awaited && call.needs === 'wait')) {
        return `[waiting] ${(result.waiting ?? []).map((call) => call.tool_use_id).join(', ')} waits for its time or its event; resume with --resume (before then, the resume waits the rest).`;
      }
      return `[waiting] ${(result.waiting ?? []).map((call) => call.tool_use_id).join(', ')} waits for a person's decision; resume with --resume after it is given.`;
    case 'cancelled':
      return `[cancelled] the run was cancelled${result.cancellation ? ` ${requestWords(result.cancellation)}` : ''}; it ends here (a fork can try again from one of its steps).`;
    case 'stoppedAtBudget': {
      const stop = result.budgetStop;
      const words = stop ? budgetReachedWords(stop) : 'budget reached';
      const larger = stop ? ` (e.g. ${largerBudgetWords(stop).join(' ')})` : '';
      return `[budget] ${words}; the run is saved before its next model call. Resume with --resume and a larger budget${larger} to go on.`;
    }
  }
}

/** The stderr line for an event: alerts always, the rest only when verbose. */
export function detailLine(event: RunEvent, verbose: boolean): string | null {
  switch (event.type) {
    case 'waiting':
      return event.unreadable
        ? `[ALERT] the decision file ${event.unreadable.file} for ${event.call.id} cannot be read (${event.unreadable.problem}): ` +
            'the run cannot take it. Move it out of the directory and give the decision again.'
        : null;
    case 'ledger-write-failed':
      return (
        `[ALERT] ledger write failed for tool_use_id=${event.call.id} (${event.call.name}): ${event.error.message}\n` +
        `[ALERT] ${event.call.name} DID run; its real result goes on to the model. If this process dies before checkpoint B, ` +
        `a resume cannot know it ran${event.call.readOnly ? '' : ' and will not run it again'}: check ${event.call.id} by hand.`
      );
    case 'resumed': {
      const lines: string[] = [];
      const cut = event.tornTail;
      if (cut) {
        const kept = cut.keptAt ? ` The cut bytes are kept in ${cut.keptAt}.` : '';
        lines.push(
          cut.lostCommittedRecord === null
            ? `[resume] the journal's last record was cut off by a crash (${cut.bytes} bytes at byte ${cut.offset}); recovered to the last complete record.${kept}`
            : `[resume] WARNING: record ${cut.lostCommittedRecord}, counted by the commit mark, is cut short; going on from the record before it ` +
                `because --accept-lost-record was given: what that record had started may happen again.${kept}`,
        );
      }
      if (event.startedBy && event.startedBy.model !== event.model) {
        lines.push(`[resume] the run was started with model ${event.startedBy.model}; it goes on with ${event.model}`);
      }
      for (const change of event.acceptedChanges) lines.push(`[resume] going on with --allow-tool-change although ${change}`);
      return lines.length ? lines.join('\n') : null;
    }
    case 'model-notice':
      return `[model] ${event.notice}`;
    case 'attached':
      return `[attach] run ${event.runId} in ${event.location} had ended (${event.status}) before this start: its stored result follows, and nothing ran again`;
    case 'started': {
      const lines = [];
      if (event.archivedPrevious) lines.push(`[start] the previous run was moved to ${event.archivedPrevious}`);
      if (verbose) lines.push(`[start] run ${event.runId} in ${event.location} (model ${event.model}, MAX_TURNS=${event.maxTurns})`);
      return lines.length ? lines.join('\n') : null;
    }
    case 'reopened':
      if (event.message !== undefined) return `[continue] the finished run takes a new message (MAX_TURNS=${event.maxTurns}): ${JSON.stringify(event.message)}`;
      return `[resume] reopened the run (was ${event.previousState}) with MAX_TURNS=${event.maxTurns}`;
    case 'lock-taken-over': {
      const waited = event.waitedMs > 0 ? ` Waited ${(event.waitedMs / 1000).toFixed(1)} s for it to notice and stop before reading the run.` : '';
      return `[lock] took the run over from ${event.holder} (${event.why}).${waited}`;
    }
    case 'reconciled': {
      const lines: string[] = [];
      if (event.detail) lines.push(`[resume][reconcile] ${event.call.id}: ${event.detail}`);
      // Where a trait came from is worth a line when it is not the tool's own code (an MCP server's hint).
      if (event.basis) lines.push(`[resume][reconcile] ${event.call.id}: rule ${event.rule ?? '?'}: ${event.basis}`);
      return lines.length ? lines.join('\n') : null;
    }
    default:
      break;
  }
  if (!verbose) return null;
  switch (event.type) {
    case 'saved':
      return `[save] ${event.label} state=${event.state} record=${event.seq} bytes=${event.bytes}`;
    case 'model-call':
      return `[model] request (turn ${event.turn})`;
    case 'model-reply':
      return (
        `[model] reply stop_reason=${event.stopReason} tokens in=${event.usage.input} out=${event.usage.output}` +
        (event.usageNote ? ` (${event.usageNote})` : '')
      );
    case 'tool-started':
      return `[tool] ${event.call.name} ${event.call.id} started`;
    case 'tool-finished':
      return `[tool] ${event.call.name} ${event.call.id} ${event.outcome.kind} in ${event.ms} ms`;
    default:
      return null;
  }
}

