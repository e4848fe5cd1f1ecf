/**
 * The page's script (bundled into the HTML): reads the data the generator wrote, builds the
 * timeline and wires selection to the diagram and the context panel. ←/→ step through the run.
 */
import { formatBytes } from '../../src/words/format.ts';
import type { RunView, VizPageData } from '../viz-data.ts';
import { renderContext } from './context-panel.ts';
import { h } from './dom.ts';
import { renderTimeline } from './timeline.ts';

const data = JSON.parse(document.getElementById('viz-data')!.textContent!) as VizPageData;
const summary = document.getElementById('run-summary')!;
const timelinePanel = document.getElementById('timeline')!;
const contextPanel = document.getElementById('context')!;

if (data.run) showRun(data.run);
else {
  summary.textContent = data.noRun ?? 'No run to show.';
  timelinePanel.append(h('p', { class: 'empty' }, 'No run: the timeline appears once a run has a journal.'));
  contextPanel.append(h('p', { class: 'empty' }, 'Run the demo (durable-agent demo), then write this page again.'));
}

/** Why a run that is not finished rests where it does, as far as its journal says. */
function stateNote(run: RunView): string {
  const end = run.processes[run.processes.length - 1]?.end;
  if (end === 'limit') return ' (stopped at a limit, resumable)';
  if (end === 'waiting') return ' (waiting for a person)';
  return ' (not finished)';
}

function showRun(run: RunView): void {
  const stops = run.processes.filter((p) => p.end === 'stopped').length;
  summary.replaceChildren(
    h('span', {}, 'task ', h('q', {}, run.task)),
    h('span', {}, `state ${run.state}${run.finished ? '' : stateNote(run)}`),
    h('span', {}, `turn ${run.turn} of ${run.maxTurns}`),
    h('span', {}, `${run.steps.length} records, ${formatBytes(run.journalBytes)}`),
    h('span', {}, `${run.processes.length} ${run.processes.length === 1 ? 'process' : 'processes'}, ${stops} ${stops === 1 ? 'stop' : 'stops'}`),
    h('span', { class: 'mono dim' }, run.runId),
  );
  const { list, items } = renderTimeline(run);
  timelinePanel.append(list);
  const states = Array.from(document.querySelectorAll<SVGGElement>('svg.machine [data-state]'));
  const edges = Array.from(document.querySelectorAll<SVGGElement>('svg.machine [data-edge]'));
  let selected = -1;

  function select(index: number): void {
    const target = Math.max(0, Math.min(run.steps.length - 1, index));
    if (target === selected) return;
    items[selected]?.setAttribute('aria-selected', 'false');
    selected = target;
    const step = run.steps[target]!;
    const item = items[target]!;
    item.setAttribute('aria-selected', 'true');
    item.scrollIntoView({ block: 'nearest' });
    for (const node of states) node.classList.toggle('current', node.dataset.state === step.state);
    for (const edge of edges) edge.classList.toggle('taken', edge.dataset.edge === step.edge);
    contextPanel.replaceChildren(renderContext(run, target));
    history.replaceState(null, '', `#seq=${step.seq}`);
  }

  list.addEventListener('click', (event) => {
    const item = (event.target as Element).closest<HTMLLIElement>('li.step');
    if (item) select(Number(item.dataset.index));
  });
  document.addEventListener('keydown', (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const inTimeline = document.activeElement === list;
    const moves: Record<string, number | undefined> = {
      ArrowRight: selected + 1,
      ArrowLeft: selected - 1,
      ArrowDown: inTimeline ? selected + 1 : undefined,
      ArrowUp: inTimeline ? selected - 1 : undefined,
      Home: inTimeline ? 0 : undefined,
      End: inTimeline ? run.steps.length - 1 : undefined,
    };
    const next = moves[event.key];
    if (next === undefined) return;
    event.preventDefault();
    select(next);
  });

  const linked = /^#seq=(\d+)$/.exec(location.hash);
  const linkedIndex = linked ? run.steps.findIndex((step) => step.seq === Number(linked[1])) : -1;
  select(linkedIndex >= 0 ? linkedIndex : run.steps.length - 1);
}
