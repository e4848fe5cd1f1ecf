/**
 * The run's context at the selected step: what the runtime does next, the turn's pending calls,
 * the ledger and the conversation so far. Everything is rebuilt from the steps (time travel).
 */
import { formatBytes, formatElapsed } from '../../src/words/format.ts';
import type { BlockView, MessageView, PendingCallView, RunView, StepView } from '../viz-data.ts';
import { formatClock, h } from './dom.ts';
import { ledgerAt, messageIdsAt } from './run-replay.ts';
import { decisionLine, reconcileLine } from './timeline.ts';

export function renderContext(run: RunView, index: number): HTMLElement {
  const step = run.steps[index]!;
  const process = run.processes[step.process]!;
  const messageIds = messageIdsAt(run, index);
  const added = new Set(step.messageEdit?.add ?? []);
  const ledger = ledgerAt(run, index);
  const written = new Set(step.ledgerWritten);

  return h(
    'div',
    { class: 'context', 'data-seq': String(step.seq) },
    h('h2', { class: 'context-title' }, `Record ${step.seq}: ${step.state}`, h('span', { class: 'point' }, step.point)),
    h(
      'dl',
      { class: 'facts' },
      ...fact('event', step.event),
      ...fact('turn', `${step.turn} of ${step.maxTurns}`),
      ...fact('written', `${formatClock(step.at)} by process ${process.pid ?? '?'} (${formatBytes(step.bytes)})`),
      ...fact('next', step.next ?? 'nothing: a final state'),
      ...(step.waiting ? fact('waits', waitFact(run, index)) : []),
      ...fact('tokens', `in ${step.usage.input} · out ${step.usage.output}`),
    ),
    step.reconcile ? h('p', { class: 'context-note' }, reconcileLine(step.reconcile)) : null,
    run.forkCommand ? h('p', { class: 'fork-command' }, 'fork from this step: ', h('code', {}, `${run.forkCommand.before} ${step.seq} ${run.forkCommand.after}${step.seq}`)) : null,
    h('h3', {}, `Pending calls (${step.pending.length})`),
    step.pending.length
      ? h(
          'table',
          { class: 'pending' },
          h('thead', {}, h('tr', {}, h('th', {}, 'tool_use_id'), h('th', {}, 'tool'), h('th', {}, 'status'), h('th', {}, 'input'))),
          h(
            'tbody',
            {},
            ...step.pending.map((call) =>
              h(
                'tr',
                { class: `${call.recorded ? 'recorded' : 'open'}${step.waiting?.toolUseId === call.id ? ' awaited' : ''}`, 'data-call': call.id },
                h('td', { class: 'mono' }, call.id),
                h('td', { class: 'mono' }, call.name),
                h('td', {}, callStatus(call, step)),
                h('td', {}, collapsible(call.input)),
              ),
            ),
          ),
        )
      : h('p', { class: 'empty' }, 'none: no turn is open'),
    ...(step.turnDecisions.length
      ? [
          h('h3', {}, `Decisions in this turn (${step.turnDecisions.length})`),
          h('ul', { class: 'turn-decisions' }, ...step.turnDecisions.map((decision) => h('li', { 'data-call': decision.toolUseId }, decisionLine(decision), h('span', { class: 'dim' }, ` · record ${decision.seq}`)))),
        ]
      : []),
    h('h3', {}, `Ledger (${ledger.length} ${ledger.length === 1 ? 'entry' : 'entries'})`),
    ledger.length
      ? h(
          'table',
          { class: 'ledger' },
          h('thead', {}, h('tr', {}, h('th', {}, 'tool_use_id'), h('th', {}, 'tool'), h('th', {}, 'outcome'), h('th', {}, 'result'))),
          recentRows(
            ledger,
            (entry) =>
              h(
                'tr',
                { class: written.has(entry.toolUseId) ? 'new' : undefined, 'data-entry': entry.toolUseId },
                h('td', { class: 'mono' }, entry.toolUseId),
                h('td', { class: 'mono' }, entry.name),
                h('td', {}, entry.isError ? `${entry.kind} (is_error)` : entry.kind, h('span', { class: 'dim' }, ` · record ${entry.seq}`)),
                h('td', {}, collapsible(entry.content)),
              ),
            ['entry', 'entries'],
          ),
        )
      : h('p', { class: 'empty' }, 'empty'),
    h('h3', {}, `Messages (${messageIds.length})`),
    recentList(messageIds, (id) => messageItem(run.messages[id]!, added.has(id)), ['message', 'messages']),
  );
}

/**
 * Long runs have hundreds of messages and ledger entries: a step shows the most recent ones
 * (where the step's changes are) and builds the rest only when asked, so stepping stays quick.
 * Returns the button that shows the rest, for the caller to place, or null when all are shown.
 */
const RECENT = 12;

function appendRecent<T>(container: HTMLElement, items: readonly T[], render: (item: T) => HTMLElement, noun: [string, string]): HTMLElement | null {
  const hidden = items.slice(0, Math.max(0, items.length - RECENT));
  container.append(...items.slice(hidden.length).map(render));
  if (hidden.length === 0) return null;
  const more = h('button', { type: 'button', class: 'show-earlier' }, `show the ${hidden.length} earlier ${hidden.length === 1 ? noun[0] : noun[1]}`);
  more.addEventListener('click', () => container.prepend(...hidden.map(render)), { once: true });
  return more;
}

function recentList<T>(items: readonly T[], render: (item: T) => HTMLElement, noun: [string, string]): HTMLElement {
  const list = h('ol', { class: 'messages' });
  const more = appendRecent(list, items, render, noun);
  more?.addEventListener('click', () => more.remove());
  return more ? h('div', {}, more, list) : list;
}

function recentRows<T>(items: readonly T[], render: (item: T) => HTMLElement, noun: [string, string]): HTMLElement {
  const body = h('tbody', {});
  const more = appendRecent(body, items, render, noun);
  if (more) {
    // A button cannot sit in a table body by itself: it gets a row of its own.
    const row = h('tr', { class: 'show-earlier-row' }, h('td', { colspan: '4' }, more));
    more.addEventListener('click', () => row.remove());
    body.prepend(row);
  }
  return body;
}

/** A call's standing at the step: its result, its decision, or that it waits (and since when). */
function callStatus(call: PendingCallView, step: StepView): string {
  if (call.recorded) return call.verdict && call.verdict !== 'approved' ? `${call.verdict}: recorded in the ledger` : 'recorded in the ledger';
  if (call.verdict === 'approved') return 'approved: runs next';
  if (step.waiting?.toolUseId === call.id) return `waits for ${call.needs === 'answer' ? 'an answer' : 'approval'} since ${formatClock(step.waiting.since)}`;
  if (call.needs) return `needs ${call.needs === 'answer' ? 'an answer' : 'approval'}; no result yet`;
  return 'no result yet';
}

/** Since when the awaited call waits, and how long it waited up to the next record (or the end). */
function waitFact(run: RunView, index: number): string {
  const wait = run.steps[index]!.waiting!;
  const next = run.steps[index + 1];
  const until = next ? `${formatElapsed(next.at - wait.since)} until record ${next.seq}` : 'still waiting at the end of the journal';
  return `${wait.toolUseId} ${wait.name} waits for ${wait.needs === 'answer' ? 'an answer' : 'approval'} since ${formatClock(wait.since)} (${until})`;
}

function fact(term: string, value: string): HTMLElement[] {
  return [h('dt', {}, term), h('dd', {}, value)];
}

function messageItem(message: MessageView, isNew: boolean): HTMLLIElement {
  return h(
    'li',
    { class: `message role-${message.role}${isNew ? ' new' : ''}` },
    h('span', { class: 'role' }, message.role, isNew ? h('span', { class: 'new-badge' }, 'new in this record') : null),
    ...message.blocks.map(blockItem),
  );
}

function blockItem(block: BlockView): HTMLElement {
  switch (block.kind) {
    case 'text':
      return h('div', { class: 'block text' }, collapsible(block.text));
    case 'tool_use':
      return h('div', { class: 'block tool-use' }, h('span', { class: 'mono' }, `tool_use ${block.id} ${block.name}`), collapsible(block.input));
    case 'tool_result':
      return h(
        'div',
        { class: `block tool-result${block.isError ? ' is-error' : ''}` },
        h('span', { class: 'mono' }, `tool_result ${block.toolUseId}${block.isError ? ' (is_error)' : ''}`),
        collapsible(block.content),
      );
    case 'thinking':
      // Collapsed until asked: the model's scratch work is long, and seldom what a reader looks for.
      return h(
        'details',
        { class: `block thinking${block.redacted ? ' redacted' : ''}` },
        h('summary', {}, block.summary),
        block.redacted ? null : h('pre', {}, block.text),
        h('p', { class: 'dim sealed' }, block.sealed),
      );
    case 'server_tool_use':
      return h(
        'div',
        { class: 'block server-tool-use', 'data-call': block.id },
        h('span', { class: 'mono' }, `server_tool_use ${block.id}`),
        h('span', { class: 'tool-words' }, block.summary),
        collapsible(block.input),
      );
    case 'server_tool_result':
      return h(
        'div',
        { class: `block server-tool-result${block.summary.startsWith('error: ') ? ' is-error' : ''}`, 'data-call': block.toolUseId },
        h('span', { class: 'mono' }, `${block.type} ${block.toolUseId}`),
        h('span', { class: 'tool-words' }, `${block.tool} → ${block.summary}`),
        collapsible(block.json),
      );
    case 'other':
      return h('div', { class: 'block other' }, h('span', { class: 'mono' }, block.type), collapsible(block.json));
  }
}

const SHORT_TEXT = 160;

/** Short text as is; long text as its first line with the rest one click away. */
function collapsible(text: string): HTMLElement {
  if (text.length <= SHORT_TEXT && !text.includes('\n')) return h('span', { class: 'value' }, text);
  const summary = text.replace(/\s+/g, ' ').slice(0, SHORT_TEXT);
  return h('details', { class: 'value' }, h('summary', {}, `${summary} …`), h('pre', {}, text));
}
