/**
 * The console page's script (bundled by the build into console.js): takes the token from the
 * address, then shows the list of runs or one run as the address says, and follows the page's
 * own links without reloading it.
 */
import { ConsoleApi } from './api.ts';
import { el } from './dom.ts';
import { showList } from './run-list.ts';
import { showRun } from './run-page.ts';
import type { StopView, ViewContext } from './view.ts';

const TOKEN_KEY = 'durable-agent-console-token';

// The token comes in the fragment of the address the console printed; it is kept for this tab
// only and taken out of the address at once, so it is in no history entry and no bookmark.
const match = /^#token=(.+)$/.exec(location.hash);
if (match) {
  sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]!));
  history.replaceState(null, '', location.pathname + location.search);
}
const token = sessionStorage.getItem(TOKEN_KEY);
const api = token ? new ConsoleApi(token) : null;
const main = document.getElementById('main')!;
let stopView: StopView = () => {};

function route(): void {
  stopView();
  stopView = () => {};
  main.textContent = '';
  if (!api) {
    main.appendChild(el('p', { class: 'message bad', id: 'no-token', text: "This page needs the console's token: open the address the console printed (it ends in #token=…)." }));
    return;
  }
  const view: ViewContext = { main, api, route };
  const runPath = /^\/runs\/([^/]+)$/.exec(location.pathname);
  stopView = runPath ? showRun(view, decodeURIComponent(runPath[1]!)) : showList(view);
}

function navigate(path: string): void {
  history.pushState(null, '', path);
  route();
}

document.addEventListener('click', (event) => {
  const target = event.target as Element | null;
  const link = target?.closest?.('a[data-nav]');
  if (!link || event.button !== 0 || event.metaKey || event.ctrlKey) return;
  event.preventDefault();
  navigate(link.getAttribute('href')!);
});
window.addEventListener('popstate', route);

route();
