/**
 * The timeline: one item per persisted transition (`li.step`), with markers between them where
 * a process stopped and where the next one resumed (`li.marker`), and how it settled the calls
 * it found open.
 */
import { formatBytes, formatElapsed } from '../../src/words/format.ts';
import type { DecisionView, ProcessView, ReconcileView, RunView, StepView, WaitView } from '../viz-data.ts';
import { formatClock, formatOffset, h } from './dom.ts';

export interface Timeline {
  list: HTMLOListElement;
  /** One per step, in step order. */
  items: HTMLLIElement[];
}

export function renderTimeline(run: RunView): Timeline {
  const list = h('ol', { class: 'timeline', role: 'listbox', tabindex: '0', 'aria-label': 'Persisted transitions' });
  const items: HTMLLIElement[] = [];
  const startedAt = run.steps[0]?.at ?? 0;
  run.steps.forEach((step, index) => {
    const process = run.processes[step.process]!;
    if (process.firstSeq === step.seq && process.resume) {
      const before = run.processes[step.process - 1] ?? null;
      if (before?.end === 'waiting') list.append(waitedMarker(before, process.resume.fromSeq));
      else if (before?.end === 'limit') list.append(limitMarker(before, process.resume.fromSeq, stateAt(run, process.resume.fromSeq)));
      else if (before?.end !== 'finished' && before?.end !== 'forked') list.append(stoppedMarker(before, process.resume.fromSeq));
      list.append(resumedMarker(process, step.process));
    }
    const item = stepItem(step, index, startedAt);
    items.push(item);
    list.append(item);
    if (run.forkedFrom?.seq === step.seq) list.append(forkPointMarker(run.forkedFrom));
    for (const fork of run.forks) if (fork.seq === step.seq) list.append(forkedHereMarker(fork));
    for (const child of run.subagents) if (child.seq === step.seq) list.append(subagentMarker(child));
  });
  if (run.calledBy) list.prepend(calledByMarker(run.calledBy));
  const last = run.steps[run.steps.length - 1];
  const end = run.processes[run.processes.length - 1]?.end;
  // A process that stopped for a person, or at a limit, said why (exit 7, 5 or 8): no guessing at a crash.
  if (last && end === 'waiting') list.append(waitingEndMarker(last));
  else if (last && end === 'limit') list.append(limitEndMarker(run, last));
  else if (last && !run.finished) list.append(openEndMarker(run, last));
  if (run.tornTail) {
    list.append(
      h(
        'li',
        { class: 'marker torn', role: 'presentation' },
        h('strong', {}, '✂ cut-off record'),
        ` ${run.tornTail.bytes} bytes at byte ${run.tornTail.offset} were being written when the process stopped; a resume drops them (and keeps them beside the journal).`,
      ),
    );
  }
  return { list, items };
}

function stepItem(step: StepView, index: number, startedAt: number): HTMLLIElement {
  const notes: Array<Node | string> = [];
  if (step.reconcile) notes.push(reconcileLine(step.reconcile));
  if (step.reopened) notes.push(h('span', { class: 'note-reopen' }, `reopened (was ${step.reopened.previousState}) with MAX_TURNS=${step.reopened.maxTurns}`));
  if (step.event === 'DECISION_NEEDED' && step.waiting) notes.push(waitLine(step.waiting));
  for (const decision of step.decided) notes.push(decisionLine(decision));
  const decisionClass = step.decided.length ? ` has-decision verdict-${step.decided[0]!.verdict}` : step.event === 'DECISION_NEEDED' ? ' has-wait' : '';
  return h(
    'li',
    {
      class: `step point-${step.point}${step.reconcile ? ' has-reconcile' : ''}${decisionClass}`,
      role: 'option',
      'aria-selected': 'false',
      'data-index': String(index),
      'data-seq': String(step.seq),
      'data-state': step.state,
      title: `record ${step.seq}: ${step.point}, ${formatClock(step.at)}`,
    },
    h('span', { class: 'col-seq' }, String(step.seq)),
    h('span', { class: 'col-turn' }, String(step.turn)),
    h('span', { class: 'col-state' }, step.state),
    h('span', { class: 'col-event' }, step.event),
    h('span', { class: 'col-tool' }, step.tools.join(', ') || '–'),
    h('span', { class: 'col-bytes' }, formatBytes(step.bytes)),
    h('span', { class: 'col-time' }, formatOffset(step.at - startedAt)),
    notes.length ? h('span', { class: 'col-note' }, ...notes) : null,
  );
}

function stoppedMarker(before: ProcessView | null, fromSeq: number): HTMLLIElement {
  const who = before?.pid ? `process ${before.pid}` : 'the process';
  return h(
    'li',
    { class: 'marker crash', role: 'presentation' },
    h('strong', {}, '⚡ stopped'),
    ` ${who} stopped after record ${fromSeq} (killed, crashed or interrupted: the journal keeps what was saved, not why it stopped).`,
  );
}

function waitedMarker(before: ProcessView, fromSeq: number): HTMLLIElement {
  const who = before.pid ? `process ${before.pid}` : 'the process';
  return h(
    'li',
    { class: 'marker waited', role: 'presentation' },
    h('strong', {}, '⏸ waited'),
    ` ${who} stopped after record ${fromSeq} with a call waiting for a person's decision (a run exits there, code 7, unless told to wait); nothing was lost.`,
  );
}

function stateAt(run: RunView, seq: number): string {
  return run.steps.find((step) => step.seq === seq)?.state ?? '?';
}

/** What the limit a run stopped at needs, in the words of the resume that gives it. */
function limitWords(state: string): { what: string; code: number; more: string } {
  return state === 'stoppedAtBudget'
    ? { what: 'its budget', code: 8, more: 'a larger budget' }
    : { what: 'its MAX_TURNS', code: 5, more: 'more turns' };
}

function limitMarker(before: ProcessView, fromSeq: number, state: string): HTMLLIElement {
  const who = before.pid ? `process ${before.pid}` : 'the process';
  const { what, code, more } = limitWords(state);
  return h(
    'li',
    { class: 'marker limit', role: 'presentation' },
    h('strong', {}, '■ stopped at a limit'),
    ` ${who} stopped after record ${fromSeq} at ${what} (exit ${code}), saved; the next process brought ${more} and went on from there.`,
  );
}

function limitEndMarker(run: RunView, last: StepView): HTMLLIElement {
  const { what, code, more } = limitWords(run.state);
  return h(
    'li',
    { class: 'marker limit', role: 'presentation' },
    h('strong', {}, '■ stopped at a limit'),
    ` the run rests in ${run.state} after record ${last.seq}: it stopped at ${what} (exit ${code}), saved and resumable. A resume with ${more} goes on from this record.`,
  );
}

function waitingEndMarker(last: StepView): HTMLLIElement {
  const call = last.waiting ? `${last.waiting.toolUseId} ${last.waiting.name}` : 'a call';
  return h(
    'li',
    { class: 'marker waited', role: 'presentation' },
    h('strong', {}, '⏸ waiting'),
    ` the run waits after record ${last.seq} for a person's decision about ${call} (its process exits 7 there unless told to wait); nothing is lost. Decide it, then resume.`,
  );
}

function resumedMarker(process: ProcessView, index: number): HTMLLIElement {
  const resume = process.resume!;
  const lines: Array<Node | string> = [
    h('strong', {}, '↻ resumed'),
    ` process ${process.pid ?? '?'} (the run's process ${index + 1}) read the journal up to record ${resume.fromSeq} and took over.`,
  ];
  if (resume.cutEnd) {
    lines.push(
      h(
        'span',
        { class: 'marker-line' },
        resume.cutEnd.lostCommittedRecord === null
          ? `It dropped a record cut off mid-write (${resume.cutEnd.bytes} bytes).`
          : `It found committed record ${resume.cutEnd.lostCommittedRecord} cut short and recovered to the record before it.`,
      ),
    );
  }
  for (const decision of resume.decisions) lines.push(h('span', { class: 'marker-line' }, reconcileLine(decision)));
  return h('li', { class: 'marker resume', role: 'presentation' }, ...lines);
}

/** In a forked run, after the last record it took from its parent. */
function forkPointMarker(parent: NonNullable<RunView['forkedFrom']>): HTMLLIElement {
  return h(
    'li',
    { class: 'marker fork fork-point', role: 'presentation' },
    h('strong', {}, '⑂ fork point'),
    ` records 0 to ${parent.seq} are those of run ${parent.runId} (${parent.location}); the records after are this run's own.`,
  );
}

/** In a run that was forked: where a fork took its records up to. */
function forkedHereMarker(fork: RunView['forks'][number]): HTMLLIElement {
  return h(
    'li',
    { class: 'marker fork forked-here', role: 'presentation' },
    h('strong', {}, '⑂ forked'),
    ` run ${fork.runId} (${fork.location}) starts from record ${fork.seq} of this run.`,
  );
}

/** After the reply that called a sub-agent: the child run the call started, and where it stands. */
function subagentMarker(child: RunView['subagents'][number]): HTMLLIElement {
  return h(
    'li',
    { class: 'marker subagent', role: 'presentation' },
    h('strong', {}, '↳ sub-agent'),
    ` ${child.toolUseId} started run ${child.runId}: ${child.state} (turn ${child.turn}). Its own records are in its own journal (durable-agent status --run ${child.runId} shows it).`,
  );
}

/** At the top of a sub-agent's run: the run and call that started it. */
function calledByMarker(calledBy: NonNullable<RunView['calledBy']>): HTMLLIElement {
  return h('li', { class: 'marker subagent called-by', role: 'presentation' }, h('strong', {}, '↰ called by'), ` run ${calledBy.runId}, its call ${calledBy.toolUseId}: this run is one of its sub-agents.`);
}

function openEndMarker(run: RunView, last: StepView): HTMLLIElement {
  return h(
    'li',
    { class: 'marker open', role: 'presentation' },
    h('strong', {}, '… not finished'),
    ` the run rests in ${run.state} after record ${last.seq}: its process stopped there or is still running. A resume picks it up from this record.`,
  );
}

export function reconcileLine(decision: ReconcileView): HTMLElement {
  return h(
    'span',
    { class: `reconcile decision-${decision.decision}` },
    `[reconcile] ${decision.toolUseId} ${decision.name}: ${decision.phrase}`,
    decision.seq === null ? ' (already in the turn: nothing to write)' : '',
  );
}

/** `‖ toolu_03 write_report waits for approval since 12:00:01.250 UTC` */
export function waitLine(wait: WaitView): HTMLElement {
  const what = wait.needs === 'answer' ? 'an answer' : 'approval';
  return h('span', { class: 'decision-wait', 'data-call': wait.toolUseId }, `‖ ${wait.toolUseId} ${wait.name} waits for ${what} since ${formatClock(wait.since)}`);
}

/** `✔ toolu_03 write_report approved by ana (note: fine) after waiting 1 min 05 s`, with the edited input or the answer. */
export function decisionLine(decision: DecisionView): HTMLElement {
  const mark = decision.verdict === 'denied' ? '✖' : '✔';
  const waited = decision.waitedMs === null ? '' : ` after waiting ${formatElapsed(decision.waitedMs)}`;
  return h(
    'span',
    { class: `decision verdict-${decision.verdict}`, 'data-call': decision.toolUseId },
    `${mark} ${decision.toolUseId} ${decision.name} ${decision.words}${waited}`,
    decision.input !== null ? h('span', { class: 'decision-input' }, ` · edited input ${decision.input.replace(/\s+/g, ' ')}`) : null,
  );
}
