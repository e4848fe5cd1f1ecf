/**
 * The lines a run prints about decisions: a call that waits (`[approval]`, `[question]`) with
 * the exact commands that decide it, and a decision taken up (`[decided]`). Pure, shared by
 * the plain output and the live view.
 */
import type { Decision, DecisionNeed } from '../../machines/agent-loop.types.ts';
import { type DecidedCall, verdictWords as fullVerdictWords } from '../awaits/decision-trail.ts';
import type { RunEvent } from '../core/run-events.ts';
import { formatElapsed } from './format.ts';
import { cliCommand, dirWords, shellQuote } from './shell-command.ts';
import { waitsForWords } from '../awaits/wait-words.ts';
import { waitPlanOf } from '../awaits/wait-tool.ts';

/** The commands that decide a call of this run, quoted to paste, without the call id. */
export interface DecisionCommands {
  approve: string;
  deny: string;
  answer: string;
  /** The command that sends a wait its event (absent: said without one). */
  signal?: string | undefined;
  /** The command that goes on with the run once decided (after exit 7). */
  resume: string;
}

/** `runId`: the run's id in DIR's folder of runs, when it is one. */
export function decisionCommandsFor(env: NodeJS.ProcessEnv, dir: string, resume: string, runId: string | null = null): DecisionCommands {
  const where = dirWords(dir, runId);
  return {
    approve: cliCommand(env, ['approve', ...where]),
    deny: cliCommand(env, ['deny', ...where]),
    answer: cliCommand(env, ['answer', ...where]),
    signal: cliCommand(env, ['signal', ...where]),
    resume,
  };
}

/** The pasteable commands that decide one call (a wait's: the signal it waits for, or none: its time comes by itself). */
export function decisionHintLines(commands: DecisionCommands, call: { tool_use_id: string; needs: DecisionNeed; input?: unknown; since?: number | null }): string[] {
  const id = shellQuote(call.tool_use_id);
  const deny = `  deny:    ${commands.deny} ${id} --reason 'TEXT'`;
  if (call.needs === 'wait') {
    const event = waitPlanOf(call.input, call.since ?? 0)?.event ?? null;
    const signal = event === null ? [] : [`  signal:  ${commands.signal ?? 'durable-agent signal'} ${event} [--data JSON]`];
    return [...signal, `  stop it: ${commands.deny} ${id} --reason 'TEXT'`];
  }
  if (call.needs === 'answer') return [`  answer:  ${commands.answer} ${id} 'TEXT'`, deny];
  // The child's end decides it; a person can only stop waiting (the child goes on).
  if (call.needs === 'child') return [`  stop waiting: ${commands.deny} ${id} --reason 'TEXT'`];
  return [`  approve: ${commands.approve} ${id}`, deny];
}

export function waitingLine(event: Extract<RunEvent, { type: 'waiting' }>): string {
  const { call } = event;
  if (event.needs === 'wait') return `[wait] ${call.id} ${call.name}: waits for ${waitsForWords({ needs: 'wait', input: call.input, since: event.since })}`;
  if (event.needs === 'answer') return `[question] ${call.id} ${call.name}: ${event.question ?? '(no question text)'}`;
  if (event.needs === 'child') return `[sub-agent] ${call.id} ${call.name}: waits for ${waitsForWords({ needs: 'child', input: call.input, since: event.since })}`;
  return `[approval] ${call.id} ${call.name} waits for a decision`;
}

export function decidedLine(event: Extract<RunEvent, { type: 'decided' }>): string {
  return `[decided] ${event.call.id} ${event.call.name} ${verdictWords(event.decision)}`;
}

function verdictWords(decision: Decision): string {
  const note = decision.note ? ` (${decision.note})` : '';
  switch (decision.verdict) {
    case 'approved':
      return `approved by ${decision.by}${decision.input !== undefined ? ' with edited input' : ''}${note}`;
    case 'denied':
      return `denied by ${decision.by}: ${decision.reason ?? ''}${note}`;
    case 'answered':
      return `answered by ${decision.by}: ${decision.text ?? ''}${note}`;
  }
}

/** `toolu_03 write_report denied by deadline: no decision within 15m, at 2026-… (turn 3, record 12, waited 15 min 00 s)` */
export function decidedText(call: DecidedCall): string {
  const waited = call.waitedMs === null ? '' : `, waited ${formatElapsed(call.waitedMs)}`;
  return `${call.tool_use_id} ${call.name} ${fullVerdictWords(call)}, at ${new Date(call.at).toISOString()} (turn ${call.turn}, record ${call.seq}${waited})`;
}
