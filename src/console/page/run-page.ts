/**
 * One run's page: its summary, what waits for a person and the controls that apply, the
 * conversation, its live records (or, at rest, how it ended), the diagram, the timeline and the
 * ledger; kept current by the live stream of its records.
 */
import type { TailRecord } from '../record-tail.ts';
import type { RunDetail } from '../run-detail.ts';
import { renderActions, type RunActionContext } from './action-forms.ts';
import { el } from './dom.ts';
import { when } from './format.ts';
import { followRecords } from './live-records.ts';
import { machineView } from './machine-view.ts';
import { hasOutcome, renderOutcome } from './run-outcome.ts';
import { renderLedger, renderTimeline, renderTranscript } from './run-records.ts';
import { renderSummary } from './run-summary.ts';
import type { StopView, ViewContext } from './view.ts';

/** Records that come close together are read as one: the run is read again this long after the first. */
const REFRESH_AFTER_RECORD_MS = 100;

export function showRun({ main, api }: ViewContext, key: string): StopView {
  let alive = true;
  const summary = el('section', { class: 'box', id: 'summary' });
  const actions = el('section', { class: 'box', id: 'actions', hidden: 'hidden' });
  const message = el('div', { id: 'action-result', role: 'status' });
  const transcript = el('ol', { class: 'transcript', id: 'transcript' });
  const machine = machineView();
  const timeline = el('table', { id: 'timeline' });
  const ledger = el('table', { id: 'ledger' });
  const liveStatus = el('span', { id: 'live-status', text: 'connecting' });
  const liveLog = el('ul', { id: 'live-log' });
  const liveBox = el('section', { class: 'box', id: 'live' });
  main.appendChild(summary);
  main.appendChild(message);
  main.appendChild(actions);
  main.appendChild(
    el('div', { class: 'run-grid' }, [
      el('section', { class: 'box' }, [el('h2', { text: 'Conversation' }), transcript]),
      liveBox,
      el('section', { class: 'box wide' }, [el('h2', { text: 'The loop' }), machine.element]),
      el('section', { class: 'box wide' }, [el('h2', { text: 'Timeline' }), el('div', { class: 'timeline-box' }, [timeline])]),
      el('section', { class: 'box wide' }, [el('h2', { text: 'Ledger' }), el('div', { class: 'table-scroll' }, [ledger])]),
    ]),
  );

  let detail: RunDetail | null = null;
  /**
   * The live records as they come; a run at rest that wrote none since the page opened shows
   * how it ended instead (and its records again if it is taken up once more).
   */
  const renderLive = () => {
    liveBox.textContent = '';
    if (detail && hasOutcome(detail)) renderOutcome(liveBox, detail);
    if (detail && hasOutcome(detail) && !liveLog.childElementCount) return;
    liveBox.appendChild(el('h2', null, ['Live records ', el('small', { class: 'dim' }, ['(', liveStatus, ')'])]));
    if (!liveLog.childElementCount) liveBox.appendChild(el('p', { class: 'dim', id: 'live-none', text: 'No record written since this page opened: each one appears here as the run writes it.' }));
    liveBox.appendChild(liveLog);
  };
  renderLive();
  // The diagram is the console's own drawing of the machine (no run's data is in it): it goes in as markup.
  api.machineSvg().then(
    (svg) => machine.draw(svg),
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
    const first = !liveLog.childElementCount;
    liveLog.appendChild(el('li', { 'data-seq': String(record.seq), text: `#${record.seq} ${record.state} ${record.event} · ${when(record.at)}` }));
    if (first) renderLive();
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
        actions.hidden = !renderActions(actions, data, context);
        renderTranscript(transcript, data.transcript);
        renderTimeline(timeline, data, context);
        renderLedger(ledger, data.ledger);
        renderLive();
        if (data.summary) machine.mark(data.summary.state);
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
    machine.stop();
    if (stopLive) stopLive();
  };
}
