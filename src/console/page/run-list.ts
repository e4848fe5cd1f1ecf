/**
 * The list of runs: filtered by state and by tenant and searched by id and task, newest first, a
 * page of 100 rows and 100 more at each "more"; every row shown is read again every 2 s. The
 * tenant column is there once some run is not the default tenant's, as in the command line's tables.
 */
import type { RunAgent } from '../../runtime/run-summary.ts';
import type { ConsoleRow, RunCategory } from '../run-sources.ts';
import type { RunListPage } from './api.ts';
import { el, headerRow } from './dom.ts';
import { usd, when } from './format.ts';
import type { StopView, ViewContext } from './view.ts';

const CATEGORIES: readonly RunCategory[] = ['running', 'waiting', 'paused', 'failed', 'stopped', 'cancelled', 'done', 'unreadable'];
const CATEGORY_WORDS: Record<RunCategory, string> = {
  running: 'running',
  waiting: 'waiting for a decision',
  paused: 'paused',
  failed: 'failed',
  stopped: 'stopped at a limit',
  cancelled: 'cancelled',
  done: 'done',
  unreadable: 'unreadable',
};
const PAGE_ROWS = 100;
/** The most rows the API gives in one answer: a longer list is asked for in several. */
const ANSWER_ROWS = 1000;
const REFRESH_MS = 2000;
/** A run started without a tenant's (core/tenant.ts). */
const DEFAULT_TENANT = 'default';

/** The filters and the search, kept while the page goes to a run and back. */
const listState = { category: new URLSearchParams(location.search).get('state') || '', tenant: new URLSearchParams(location.search).get('tenant') || '', q: '' };

/** The list's address: its filters, so a reload or a link keeps them. */
function listAddress(): string {
  const params = new URLSearchParams();
  if (listState.category) params.set('state', listState.category);
  if (listState.tenant) params.set('tenant', listState.tenant);
  const query = params.toString();
  return query ? `/?${query}` : '/';
}

export function showList({ main, api, route }: ViewContext): StopView {
  const filters = el('div', { class: 'filters', id: 'filters' });
  const search = el('input', { type: 'search', id: 'search', placeholder: 'search by run id or task', value: listState.q });
  // Made once and kept: rebuilt at each refresh, an open choice would close under the pointer.
  const tenantFilter = el('select', { id: 'tenant-filter', 'aria-label': 'tenant', hidden: 'hidden' });
  tenantFilter.onchange = () => {
    listState.tenant = tenantFilter.value;
    history.replaceState(null, '', listAddress());
    shown = PAGE_ROWS;
    load();
  };
  const table = el('table', { id: 'runs' });
  const total = el('p', { class: 'dim', id: 'total' });
  const more = el('button', { type: 'button', id: 'more', hidden: 'hidden', text: `show ${PAGE_ROWS} more` });
  main.appendChild(el('section', { class: 'box' }, [filters, el('div', { class: 'table-scroll' }, [table]), total, more]));
  let alive = true;
  let shown = PAGE_ROWS;
  let asked = 0;
  const setCategory = (name: string) => {
    listState.category = name;
    history.replaceState(null, '', listAddress());
    route();
  };
  const load = () => {
    const query = `?q=${encodeURIComponent(listState.q)}${listState.category ? `&category=${listState.category}` : ''}${listState.tenant ? `&tenant=${encodeURIComponent(listState.tenant)}` : ''}`;
    // A longer list is asked for in several answers, each from the cursor the last one ended at.
    const answers = async (): Promise<RunListPage[]> => {
      const pages: RunListPage[] = [];
      let rows = 0;
      let after = '';
      do {
        const page = await api.runs(`${query}&limit=${Math.min(ANSWER_ROWS, shown - rows)}${after ? `&after=${encodeURIComponent(after)}` : ''}`);
        pages.push(page);
        rows += page.rows.length;
        after = page.next ?? '';
      } while (after && rows < shown);
      return pages;
    };
    // An older answer that arrives after a newer one (a search typed on) is dropped.
    const mine = ++asked;
    answers().then(
      (pages) => {
        if (!alive || mine !== asked) return;
        const data = pages[0]!;
        const rows = pages.flatMap((page) => page.rows);
        document.getElementById('who')!.textContent = `${data.role === 'read' ? 'reading as' : 'deciding as'} ${data.by}${data.tenant === null ? '' : ` (tenant ${data.tenant})`}`;
        renderTenants(tenantFilter, data);
        renderFilters(filters, search, tenantFilter, data, setCategory);
        renderRows(table, rows);
        const filtered = listState.q || listState.category;
        total.textContent = `${rows.length} of ${data.total} runs${data.matching > rows.length ? ` (the newest ${rows.length} of ${data.matching}${filtered ? ' that match' : ''})` : ''}`;
        if (pages[pages.length - 1]!.more) more.removeAttribute('hidden');
        else more.setAttribute('hidden', 'hidden');
      },
      (error: Error) => {
        total.textContent = error.message;
      },
    );
  };
  more.onclick = () => {
    shown += PAGE_ROWS;
    load();
  };
  search.oninput = () => {
    listState.q = search.value;
    shown = PAGE_ROWS;
    load();
  };
  load();
  const timer = setInterval(load, REFRESH_MS);
  return () => {
    alive = false;
    clearInterval(timer);
  };
}

/**
 * The tenant filter: there for a caller of every tenant once some run is not the default
 * tenant's; its choices change only when the tenants do.
 */
function renderTenants(select: HTMLSelectElement, data: RunListPage): void {
  const names = [...new Set([...data.tenants, ...(listState.tenant ? [listState.tenant] : [])])].sort();
  const wanted = ['', ...names].join('\u0000');
  if (select.dataset.names !== wanted) {
    select.dataset.names = wanted;
    select.textContent = '';
    select.appendChild(el('option', { value: '', text: 'every tenant' }));
    for (const name of names) select.appendChild(el('option', { value: name, text: name }));
    select.value = listState.tenant;
  }
  const useful = data.tenant === null && (names.length > 1 || names.some((name) => name !== DEFAULT_TENANT));
  if (useful) select.removeAttribute('hidden');
  else select.setAttribute('hidden', 'hidden');
}

function renderFilters(filters: HTMLElement, search: HTMLInputElement, tenantFilter: HTMLSelectElement, data: RunListPage, setCategory: (name: string) => void): void {
  filters.textContent = '';
  const all = el('button', { type: 'button', 'data-category': '', 'aria-pressed': String(listState.category === ''), text: `all (${data.total})` });
  all.onclick = () => setCategory('');
  filters.appendChild(all);
  for (const name of CATEGORIES) {
    if (name === 'unreadable' && !data.counts[name]) continue;
    const button = el('button', { type: 'button', 'data-category': name, 'aria-pressed': String(listState.category === name), text: `${CATEGORY_WORDS[name]} (${data.counts[name]})` });
    button.onclick = () => setCategory(name);
    filters.appendChild(button);
  }
  filters.appendChild(tenantFilter);
  filters.appendChild(search);
}

function renderRows(table: HTMLTableElement, rows: readonly ConsoleRow[]): void {
  table.textContent = '';
  // A worker and a lease are the fleet's: the columns are there when a fleet run is.
  const fleet = rows.some((row) => row.source === 'fleet');
  const tenants = rows.some((row) => row.tenant !== DEFAULT_TENANT);
  table.appendChild(headerRow(['run', ...(tenants ? ['tenant'] : []), 'state', 'agent', 'tool', 'task', 'turn', 'tokens', 'cost', 'last save', ...(fleet ? ['worker', 'epoch'] : []), 'waits for']));
  for (const row of rows) {
    const link = el('a', { href: `/runs/${encodeURIComponent(row.key)}`, 'data-nav': '', text: row.runId + (row.archived ? ' (archived)' : '') });
    table.appendChild(
      el('tr', { class: 'run-row', 'data-run': row.runId, 'data-category': row.category }, [
        el('td', { class: 'run' }, [link]),
        tenants ? el('td', { class: 'tenant', text: row.tenant }) : null,
        el('td', null, [el('span', { class: `cat cat-${row.category}`, text: row.state === null ? 'unreadable' : row.state }), row.problem ? el('div', { class: 'dim problem', text: row.problem }) : null]),
        agentCell(row.agent),
        el('td', { class: 'tool', text: row.tool ?? '-' }),
        el('td', { class: 'task', title: row.task, text: row.task }),
        el('td', { text: String(row.turn) }),
        el('td', { text: row.tokens === null ? '-' : String(row.tokens) }),
        el('td', { text: usd(row.costUsd) }),
        lastSaveCell(row.updatedAt),
        fleet ? el('td', { class: 'worker', text: row.worker || '-' }) : null,
        fleet ? el('td', { text: row.leaseEpoch === null ? '-' : String(row.leaseEpoch) }) : null,
        el('td', { class: 'waits', text: row.waitsFor || (row.pausedBy ? `paused by ${row.pausedBy}` : '-') }),
      ]),
    );
  }
}

/** Today's saves by their time, older ones by their day and time (each whole in the tooltip): the column stays narrow. */
function lastSaveCell(at: number | null): HTMLTableCellElement {
  const words = when(at);
  const [day, time] = words.split(' ');
  if (at === null || time === undefined) return el('td', { class: 'when', text: words });
  const today = day === when(Date.now()).split(' ')[0];
  return el('td', { class: 'when', title: words }, [today ? null : el('span', { text: day! }), today ? null : ' ', el('span', { text: time })]);
}

/** The agent's name, its version under it (as `name@version` in the tooltip, the fleet's own words). */
function agentCell(agent: RunAgent | null): HTMLTableCellElement {
  if (!agent) return el('td', { class: 'agent', text: '-' });
  const words = agent.version === null ? agent.name : `${agent.name}@${agent.version}`;
  return el('td', { class: 'agent', title: words }, [agent.name, agent.version === null ? null : el('span', { class: 'version', text: `@${agent.version}` })]);
}
