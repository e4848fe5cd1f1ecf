/** A run's records as its page shows them: the conversation, the timeline (with a fork button per record) and the ledger. */
import type { TranscriptEntry } from '../../runtime/run-transcript.ts';
import type { LedgerRow, RunDetail } from '../run-detail.ts';
import { forkAt, type RunActionContext } from './action-forms.ts';
import { el, headerRow } from './dom.ts';
import { clock, when } from './format.ts';

/** An entry of the conversation as a label and its text. */
function entryWords(entry: TranscriptEntry): [string, string] {
  switch (entry.kind) {
    case 'text':
      return [entry.role, entry.text];
    case 'thinking':
      return ['thinking', entry.redacted ? '(redacted by the API)' : entry.text];
    case 'tool-use':
      return ['tool call', `${entry.name} ${entry.id} ${JSON.stringify(entry.input, null, 2)}`];
    case 'tool-result':
      return [entry.isError ? 'error' : 'result', `${entry.name} ${entry.id}: ${entry.text}${entry.images ? ` [${entry.images} image(s)]` : ''}`];
    case 'open-call':
      return ['open call', `${entry.name} ${entry.id}: ${entry.waitsFor ? `waits for ${entry.waitsFor === 'answer' ? 'an answer' : entry.waitsFor === 'wait' ? 'its time or its event' : entry.waitsFor === 'child' ? 'the end of the sub-agent run it queued' : 'approval'}` : 'no result yet'}`];
    case 'image':
      return [entry.role, `[image ${entry.mediaType}]`];
    case 'compacted':
      return ['compacted', `a summary took the place of the ${entry.replaced} messages above: ${entry.summary}`];
    default:
      return [entry.role || '?', `[${entry.type} block]`];
  }
}

export function renderTranscript(list: HTMLElement, entries: readonly TranscriptEntry[]): void {
  list.textContent = '';
  for (const entry of entries) {
    const words = entryWords(entry);
    let body: HTMLElement;
    if (entry.kind === 'thinking' && !entry.redacted) {
      // Thinking is collapsed to its first line; the rest opens on a click.
      body = el('details', { class: 'body' }, [el('summary', { text: `${entry.text.split('\n')[0] || ''} (${entry.text.length} characters)` }), el('div', { text: entry.text })]);
    } else {
      body = el('div', { class: 'body', text: words[1] });
    }
    const kind = entry.kind === 'tool-result' && entry.isError ? 'error' : entry.kind;
    list.appendChild(el('li', { class: `kind-${kind}`, 'data-kind': entry.kind }, [el('span', { class: 'label', text: words[0] }), body]));
  }
}

export function renderLedger(table: HTMLTableElement, rows: readonly LedgerRow[]): void {
  table.textContent = '';
  table.appendChild(headerRow(['call', 'tool', 'outcome', 'record', 'content']));
  for (const row of rows) {
    table.appendChild(
      el('tr', { 'data-call': row.toolUseId }, [
        el('td', { text: row.toolUseId }),
        el('td', { text: row.name }),
        el('td', { text: row.kind + (row.isError ? ' (error)' : '') }),
        el('td', { text: String(row.seq) }),
        el('td', { class: 'note', text: row.content }),
      ]),
    );
  }
}

/** One row per record; a row where another process took the run up is marked, with how it settled the open calls. */
export function renderTimeline(table: HTMLTableElement, data: RunDetail, context: RunActionContext): void {
  table.textContent = '';
  table.appendChild(headerRow(['#', 'time', 'turn', 'state', 'event', 'tools', 'note', '']));
  data.steps.forEach((step, index) => {
    const notes: string[] = [];
    const proc = data.processes[step.process];
    const boundary = index > 0 && proc && proc.firstSeq === step.seq && proc.resume;
    if (boundary) {
      const decisions = boundary.decisions.length ? `: ${boundary.decisions.map((d) => `${d.toolUseId} ${d.name} ${d.phrase}`).join('; ')}` : '';
      notes.push(`resumed (pid ${proc.pid === null ? '?' : proc.pid}) after record ${boundary.fromSeq}${decisions}`);
    }
    if (step.reconcile) notes.push(`reconcile ${step.reconcile.toolUseId}: ${step.reconcile.phrase}`);
    for (const r of step.reused) notes.push(`reused ${r.toolUseId}: ${r.phrase}`);
    if (step.waiting) notes.push(`${step.waiting.toolUseId} waits for ${step.waiting.needs}`);
    for (const words of step.decided) notes.push(words);
    const forkable = !(data.readOnly || data.source !== 'folder');
    table.appendChild(
      el('tr', { class: boundary ? 'boundary' : null, 'data-seq': String(step.seq) }, [
        el('td', { text: String(step.seq) }),
        el('td', { title: when(step.at), text: clock(step.at) }),
        el('td', { text: String(step.turn) }),
        el('td', { text: step.state }),
        el('td', { text: step.event }),
        el('td', { text: step.tools.join(', ') }),
        el('td', { class: 'note', text: notes.join('; ') }),
        el('td', null, [forkable ? el('button', { type: 'button', 'data-action': 'fork', title: 'a new run from this record', text: 'fork', onclick: () => forkAt(context, step.seq) }) : null]),
      ]),
    );
  });
}
