/**
 * One run's page: its summary, what waits for a person, the controls, the conversation, the
 * diagram, the timeline and the ledger; kept current by the live stream of its records.
 */
import type { TailRecord } from '../record-tail.ts';
import type { RunDetail } from '../run-detail.ts';
import { renderActions, type RunActionContext } from './action-forms.ts';
import { el } from './dom.ts';
import { when } from './format.ts';
import { followRecords } from './live-records.ts';
import { renderLedger, renderTimeline, renderTranscript } from './run-records.ts';
import { renderSummary } from './run-summary.ts';
import type { StopView, ViewContext } from './view.ts';

/** Records that come close together are read as one: the run is read again this long after the first. */
const REFRESH_AFTER_RECORD_MS = 100;

export function showRun({ main, api }: ViewContext, key: string): StopView {
  let alive = true;
  const summary = el('section', { class: 'box', id: 'summary' });
  const actions = el('section', { class: 'box', id: 'actions' });
  const message = el('div', { id: 'action-result', role: 'status' });
  const transcript = el('ol', { class: 'transcript', id: 'transcript' });
  const diagram = el('div', { class: 'diagram-box', id: 'diagram' });
  const timeline = el('table', { id: 'timeline' });
  const ledger = el('table', { id: 'ledger' });
  const liveStatus = el('span', { id: 'live-status', text: 'connecting' });
  const liveLog = el('ul', { id: 'live-log' });
  main.appendChild(summary);
  main.appendChild(message);
  main.appendChild(actions);
  main.appendChild(
    el('div', { class: 'run-grid' }, [
      el('section', { class: 'box' }, [el('h2', { text: 'Conversation' }), transcript]),
      el('section', { class: 'box' }, [el('h2', { text: 'The loop' }), diagram]),
      el('section', { class: 'box wide' }, [el('h2', { text: 'Timeline' }), el('div', { class: 'timeline-box' }, [timeline])]),
      el('section', { class: 'box' }, [el('h2', { text: 'Ledger' }), ledger]),
      el('section', { class: 'box' }, [el('h2', null, ['Live records ', el('small', { class: 'dim' }, ['(', liveStatus, ')'])]), liveLog]),
    ]),
  );

  let detail: RunDetail | null = null;
  const paintDiagram = () => {
    if (!detail?.summary) return;
    const state = detail.summary.state;
    diagram.querySelectorAll('[data-state]').forEach((node) => {
      node.classList.toggle('current', node.getAttribute('data-state') === state);
    });
  };
  // The diagram is the console's own drawing of the machine (no run's data is in it): it goes in as markup.
  api.machineSvg().then(
    (svg) => {
      diagram.innerHTML = svg;
      paintDiagram();
    },
    () => {},
  );

  let stopLive: (() => void) | null = null;
  let refreshing: Promise<void> | null = null;
  let pending: ReturnType<typeof setTimeout> | null = null;
  const soon = () => {
    if (pending) return;
    pending = setTimeout(() => {
      pending = null;
      void refresh();
    }, REFRESH_AFTER_RECORD_MS);
  };
  const onRecord = (record: TailRecord) => {
    liveLog.appendChild(el('li', { 'data-seq': String(record.seq), text: `#${record.seq} ${record.state} ${record.event} · ${when(record.at)}` }));
    liveLog.scrollTop = liveLog.scrollHeight;
    soon();
  };
  const onStatus = (words: string) => {
    liveStatus.textContent = words;
  };
  const context: RunActionContext = { api, key, message, refresh: () => void refresh() };
  const refresh = (): Promise<void> => {
    if (refreshing) return refreshing;
    refreshing = api.run(key).then(
      (data) => {
        refreshing = null;
        if (!alive) return;
        detail = data;
        renderSummary(summary, data);
        renderActions(actions, data, context);
        renderTranscript(transcript, data.transcript);
        renderTimeline(timeline, data, context);
        renderLedger(ledger, data.ledger);
        paintDiagram();
        if (!stopLive && data.summary) stopLive = followRecords({ api, key, from: data.summary.lastSeq, onRecord, onStatus });
      },
      (error: Error) => {
        refreshing = null;
        summary.textContent = error.message;
      },
    );
    return refreshing;
  };

  void refresh();
  return () => {
    alive = false;
    if (stopLive) stopLive();
  };
}
