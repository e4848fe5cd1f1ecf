/** A run's summary on its page: its state and facts, where it came from, and the sub-agent runs under it. */
import type { ChildRow, RunDetail } from '../run-detail.ts';
import { el } from './dom.ts';
import { usd, when } from './format.ts';

export function renderSummary(box: HTMLElement, data: RunDetail): void {
  box.textContent = '';
  const s = data.summary;
  if (data.damage) box.appendChild(el('p', { class: 'message damage', id: 'damage', text: `Damaged journal, shown read-only as far as it can be read: ${data.damage}` }));
  if (!s) return;
  box.appendChild(el('h2', null, ['Run ', el('code', { text: s.runId }), ' ', el('span', { id: 'run-state', class: 'cat', 'data-state': s.state, text: s.state })]));
  const facts: Array<[string, string]> = [
    ['task', s.task],
    ['turn', `${s.turn} of ${s.maxTurns}`],
    ['tokens', String(s.tokens)],
    ['cost', usd(s.costUsd)],
    ['last save', `record ${s.lastSeq} at ${when(s.lastSaveAt)}`],
    ['store', data.location],
  ];
  if (s.finalText) facts.push(['answer', s.finalText]);
  if (s.failure) facts.push(['failure', s.failure]);
  if (data.readOnly) facts.push(['read-only', data.readOnly]);
  const { forkedFrom } = data.lineage;
  if (forkedFrom) facts.push(['forked from', `run ${forkedFrom.runId} at its record ${forkedFrom.seq} (${forkedFrom.location})`]);
  for (const fork of data.lineage.forks) facts.push(['fork', `at record ${fork.seq}: run ${fork.runId} (${fork.location})`]);
  const status = data.status;
  if (status) {
    for (const call of status.decided) facts.push(['decided', `${call.tool_use_id} ${call.name} ${call.verdict} by ${call.by}${call.reason ? ` (${call.reason})` : ''}`]);
    for (const request of status.controls) facts.push([request.kind === 'pause' ? 'paused' : 'cancel asked', `by ${request.by}`]);
    if (status.cancellation) facts.push(['cancelled', `by ${status.cancellation.by}${status.cancellation.reason ? `: ${status.cancellation.reason}` : ''}`]);
  }
  const list = el('dl', { id: 'facts' });
  for (const [name, value] of facts) {
    list.appendChild(el('dt', { text: name }));
    list.appendChild(el('dd', { text: value }));
  }
  const called = data.lineage.calledBy;
  if (called) {
    list.appendChild(el('dt', { text: 'called by' }));
    list.appendChild(el('dd', { id: 'called-by' }, [runLink(called.runId, called.key), ` (its call ${called.toolUseId})`]));
  }
  box.appendChild(list);
  if (data.lineage.children.length) {
    box.appendChild(el('h3', { text: 'Sub-agent runs' }));
    box.appendChild(childTree(data.lineage.children, 'sub-agents'));
  }
}

/** A link to a run's page, or its id alone when the console does not show it. */
function runLink(runId: string, key: string | null): HTMLElement {
  return key ? el('a', { href: `/runs/${encodeURIComponent(key)}`, 'data-nav': '', text: runId }) : el('code', { text: runId });
}

function childTree(children: readonly ChildRow[], id: string | null): HTMLUListElement {
  const list = el('ul', id ? { id, class: 'tree' } : { class: 'tree' });
  for (const child of children) {
    list.appendChild(
      el('li', { 'data-run': child.runId }, [
        runLink(child.runId, child.key),
        ' ',
        el('span', { class: 'cat', 'data-state': child.state, text: child.state }),
        ` for call ${child.toolUseId}, turn ${child.turn}, ${child.tokens} tokens, ${usd(child.costUsd)}`,
        child.children.length ? childTree(child.children, null) : null,
      ]),
    );
  }
  return list;
}
