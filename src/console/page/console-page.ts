/**
 * The console's page: one small hand-written HTML page, its script and its style, served as they
 * are (no build step, no framework). The script talks to the API with the token in a header,
 * renders every text with textContent (never as markup, so a tool result cannot become a
 * script), and follows a run's records live over a stream it reconnects with Last-Event-ID.
 */

export const CONSOLE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>durable-agent console</title>
<link rel="stylesheet" href="/console.css">
<script src="/console.js" defer></script>
</head>
<body>
<header class="console-top">
<h1><a href="/" data-nav>durable-agent console</a></h1>
<span id="who" class="dim"></span>
</header>
<main id="main"><p class="dim">Loading…</p></main>
</body>
</html>
`;

export const CONSOLE_STYLE = String.raw`
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; margin: 0; background: #f4f5f7; color: #1d2330; }
a { color: #1d4ed8; }
.console-top { display: flex; gap: 16px; align-items: baseline; padding: 8px 16px; background: #fff; border-bottom: 1px solid #d5dae1; }
.console-top h1 { font-size: 18px; margin: 0; }
.console-top h1 a { color: inherit; text-decoration: none; }
main { padding: 10px 16px; }
.dim { color: #5f6b7e; }
.box { background: #fff; border: 1px solid #d5dae1; border-radius: 8px; padding: 10px 12px; margin: 0 0 10px; min-width: 0; }
.filters { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin-bottom: 8px; }
.filters button { border: 1px solid #d5dae1; background: #fff; border-radius: 14px; padding: 2px 10px; cursor: pointer; }
.filters button[aria-pressed="true"] { background: #1d4ed8; color: #fff; border-color: #1d4ed8; }
.filters input { padding: 3px 8px; min-width: 240px; }
table { border-collapse: collapse; width: 100%; table-layout: auto; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #eceff3; vertical-align: top; }
th { font-weight: 600; color: #5f6b7e; font-size: 12px; }
td, th { white-space: nowrap; }
#facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 14px; margin: 4px 0 0; }
#facts dt { color: #5f6b7e; }
#facts dd { margin: 0; overflow-wrap: anywhere; }
td.task { max-width: 420px; min-width: 200px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.cat { display: inline-block; border-radius: 10px; padding: 0 8px; font-size: 12px; background: #eceff3; }
.cat-waiting { background: #fff7ed; color: #a16207; }
.cat-failed, .cat-unreadable { background: #fee2e2; color: #b91c1c; }
.cat-done { background: #ecfdf5; color: #047857; }
.cat-running { background: #dbe6ff; color: #1d4ed8; }
.cat-paused, .cat-stopped, .cat-cancelled { background: #f2f4f7; color: #475467; }
.run-grid { display: grid; gap: 10px; grid-template-columns: minmax(0, 1fr); }
@media (min-width: 1100px) { .run-grid { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); } }
.transcript { list-style: none; margin: 0; padding: 0; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
.transcript li { display: grid; grid-template-columns: 90px minmax(0, 1fr); gap: 8px; padding: 3px 0; border-bottom: 1px solid #f2f4f7; }
.transcript .label { color: #5f6b7e; }
.transcript .body { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 16em; overflow: auto; }
.transcript .kind-error .body { color: #b91c1c; }
.transcript .kind-open-call .body { color: #a16207; font-weight: 600; }
.diagram-box svg { width: 100%; height: auto; max-height: 70vh; }
.timeline-box { max-height: 60vh; overflow: auto; font-size: 12.5px; }
.wide { grid-column: 1 / -1; }
#timeline tr.boundary td { border-top: 2px solid #b91c1c; }
#timeline td.note, #ledger td.note { color: #5f6b7e; white-space: normal; }
.decision { border: 1px solid #fde68a; background: #fffbeb; border-radius: 6px; padding: 8px; margin: 6px 0; }
.decision textarea { width: 100%; min-height: 6em; font-family: ui-monospace, monospace; font-size: 12px; }
.decision p.question { margin: 6px 0; font-weight: 600; white-space: pre-wrap; }
.decision input[type=text], .controls input[type=text] { min-width: 260px; }
.decision .buttons, .controls { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin-top: 6px; }
.message { margin: 6px 0; padding: 6px 8px; border-radius: 6px; }
.message.ok { background: #ecfdf5; color: #047857; }
.message.bad { background: #fee2e2; color: #b91c1c; }
.damage { background: #fee2e2; color: #7f1d1d; border: 1px solid #fca5a5; }
#live-log { list-style: none; padding: 0; margin: 0; max-height: 12em; overflow: auto; font-family: ui-monospace, monospace; font-size: 12px; }
`;

export const CONSOLE_SCRIPT = String.raw`'use strict';
(function () {
  var TOKEN_KEY = 'durable-agent-console-token';
  var CATEGORIES = ['running', 'waiting', 'paused', 'failed', 'stopped', 'cancelled', 'done', 'unreadable'];
  var CATEGORY_WORDS = { running: 'running', waiting: 'waiting for a decision', paused: 'paused', failed: 'failed', stopped: 'stopped at a limit', cancelled: 'cancelled', done: 'done', unreadable: 'unreadable' };

  // The token comes in the fragment of the address the console printed; it is kept for this tab
  // only and taken out of the address at once, so it is in no history entry and no bookmark.
  var match = /^#token=(.+)$/.exec(location.hash);
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
    history.replaceState(null, '', location.pathname + location.search);
  }
  var token = sessionStorage.getItem(TOKEN_KEY);
  var main = document.getElementById('main');
  var stopView = function () {};

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) for (var key in attrs) {
      if (key === 'text') node.textContent = attrs[key];
      else if (key === 'onclick' || key === 'oninput' || key === 'onchange') node[key] = attrs[key];
      else if (attrs[key] !== null && attrs[key] !== undefined && attrs[key] !== false) node.setAttribute(key, attrs[key]);
    }
    (children || []).forEach(function (child) { if (child) node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child); });
    return node;
  }

  function api(path, options) {
    options = options || {};
    var headers = { authorization: 'Bearer ' + token };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    return fetch(path, { method: options.method || 'GET', headers: headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) }).then(function (response) {
      return response.text().then(function (text) {
        var body = null;
        try { body = JSON.parse(text); } catch (e) { body = text; }
        if (!response.ok) throw new Error((body && body.error) || ('HTTP ' + response.status));
        return body;
      });
    });
  }

  function when(ms) { return ms === null || ms === undefined ? '-' : new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z'); }
  function clock(ms) { return new Date(ms).toISOString().slice(11, 23); }
  function usd(value) { return value === null || value === undefined ? '-' : '$' + value.toFixed(4); }

  function navigate(path) {
    history.pushState(null, '', path);
    route();
  }
  document.addEventListener('click', function (event) {
    var link = event.target.closest && event.target.closest('a[data-nav]');
    if (!link || event.button !== 0 || event.metaKey || event.ctrlKey) return;
    event.preventDefault();
    navigate(link.getAttribute('href'));
  });
  window.addEventListener('popstate', route);

  function route() {
    stopView();
    stopView = function () {};
    main.textContent = '';
    if (!token) {
      main.appendChild(el('p', { class: 'message bad', id: 'no-token', text: 'This page needs the console\'s token: open the address the console printed (it ends in #token=…).' }));
      return;
    }
    var runPath = /^\/runs\/([^/]+)$/.exec(location.pathname);
    if (runPath) showRun(decodeURIComponent(runPath[1]));
    else showList();
  }

  // The list of runs: filtered by state and searched by id and task, newest first, a page of 100
  // rows and 100 more at each "more"; every row shown is read again every 2 s.
  var PAGE_ROWS = 100, ANSWER_ROWS = 1000;
  var listState = { category: new URLSearchParams(location.search).get('state') || '', q: '' };
  function showList() {
    var filters = el('div', { class: 'filters', id: 'filters' });
    var search = el('input', { type: 'search', id: 'search', placeholder: 'search by run id or task', value: listState.q });
    var table = el('table', { id: 'runs' });
    var total = el('p', { class: 'dim', id: 'total' });
    var more = el('button', { type: 'button', id: 'more', hidden: 'hidden', text: 'show ' + PAGE_ROWS + ' more' });
    main.appendChild(el('section', { class: 'box' }, [filters, table, total, more]));
    var timer = null;
    var alive = true;
    var shown = PAGE_ROWS;
    var asked = 0;
    function load() {
      var query = '?q=' + encodeURIComponent(listState.q) + (listState.category ? '&category=' + listState.category : '');
      var answers = [];
      for (var offset = 0; offset < shown; offset += ANSWER_ROWS) answers.push(api('/api/runs' + query + '&offset=' + offset + '&limit=' + Math.min(ANSWER_ROWS, shown - offset)));
      // An older answer that arrives after a newer one (a search typed on) is dropped.
      var mine = ++asked;
      Promise.all(answers).then(function (pages) {
        if (!alive || mine !== asked) return;
        var data = pages[0];
        var rows = [].concat.apply([], pages.map(function (page) { return page.rows; }));
        document.getElementById('who').textContent = 'deciding as ' + data.by;
        renderFilters(filters, search, data);
        renderRows(table, rows);
        var filtered = listState.q || listState.category;
        total.textContent = rows.length + ' of ' + data.total + ' runs' + (data.matching > rows.length ? ' (the newest ' + rows.length + ' of ' + data.matching + (filtered ? ' that match' : '') + ')' : '');
        if (pages[pages.length - 1].more) more.removeAttribute('hidden'); else more.setAttribute('hidden', 'hidden');
      }, function (error) { total.textContent = error.message; });
    }
    more.onclick = function () { shown += PAGE_ROWS; load(); };
    search.oninput = function () { listState.q = search.value; shown = PAGE_ROWS; load(); };
    load();
    timer = setInterval(load, 2000);
    stopView = function () { alive = false; clearInterval(timer); };
  }

  function renderFilters(filters, search, data) {
    filters.textContent = '';
    var all = el('button', { type: 'button', 'data-category': '', 'aria-pressed': String(listState.category === ''), text: 'all (' + data.total + ')' });
    all.onclick = function () { setCategory(''); };
    filters.appendChild(all);
    CATEGORIES.forEach(function (name) {
      if (name === 'unreadable' && !data.counts[name]) return;
      var button = el('button', { type: 'button', 'data-category': name, 'aria-pressed': String(listState.category === name), text: CATEGORY_WORDS[name] + ' (' + data.counts[name] + ')' });
      button.onclick = function () { setCategory(name); };
      filters.appendChild(button);
    });
    filters.appendChild(search);
  }
  function setCategory(name) {
    listState.category = name;
    history.replaceState(null, '', name ? '/?state=' + name : '/');
    route();
  }

  function renderRows(table, rows) {
    table.textContent = '';
    table.appendChild(el('tr', null, ['run', 'state', 'task', 'turn', 'tokens', 'cost', 'last save', 'worker', 'epoch', 'waits for'].map(function (h) { return el('th', { text: h }); })));
    rows.forEach(function (row) {
      var link = el('a', { href: '/runs/' + encodeURIComponent(row.key), 'data-nav': '', text: row.runId + (row.archived ? ' (archived)' : '') });
      table.appendChild(el('tr', { class: 'run-row', 'data-run': row.runId, 'data-category': row.category }, [
        el('td', null, [link]),
        el('td', null, [el('span', { class: 'cat cat-' + row.category, text: row.state === null ? 'unreadable' : row.state }), row.problem ? el('div', { class: 'dim', text: row.problem }) : null]),
        el('td', { class: 'task', title: row.task, text: row.task }),
        el('td', { text: String(row.turn) }),
        el('td', { text: row.tokens === null ? '-' : String(row.tokens) }),
        el('td', { text: usd(row.costUsd) }),
        el('td', { text: when(row.updatedAt) }),
        el('td', { text: row.worker || '-' }),
        el('td', { text: row.leaseEpoch === null ? '-' : String(row.leaseEpoch) }),
        el('td', { text: row.waitsFor || (row.pausedBy ? 'paused by ' + row.pausedBy : '-') }),
      ]));
    });
  }

  // One run: its summary, what waits for a person, the controls, the conversation, the diagram,
  // the timeline; kept current by the live stream of its records.
  function showRun(key) {
    var alive = true;
    var summary = el('section', { class: 'box', id: 'summary' });
    var actions = el('section', { class: 'box', id: 'actions' });
    var message = el('div', { id: 'action-result', role: 'status' });
    var transcript = el('ol', { class: 'transcript', id: 'transcript' });
    var diagram = el('div', { class: 'diagram-box', id: 'diagram' });
    var timeline = el('table', { id: 'timeline' });
    var ledger = el('table', { id: 'ledger' });
    var liveStatus = el('span', { id: 'live-status', text: 'connecting' });
    var liveLog = el('ul', { id: 'live-log' });
    main.appendChild(summary);
    main.appendChild(message);
    main.appendChild(actions);
    main.appendChild(el('div', { class: 'run-grid' }, [
      el('section', { class: 'box' }, [el('h2', { text: 'Conversation' }), transcript]),
      el('section', { class: 'box' }, [el('h2', { text: 'The loop' }), diagram]),
      el('section', { class: 'box wide' }, [el('h2', { text: 'Timeline' }), el('div', { class: 'timeline-box' }, [timeline])]),
      el('section', { class: 'box' }, [el('h2', { text: 'Ledger' }), ledger]),
      el('section', { class: 'box' }, [el('h2', null, ['Live records ', el('small', { class: 'dim' }, ['(', liveStatus, ')'])]), liveLog]),
    ]));
    api('/api/machine.svg').then(function (svg) { diagram.innerHTML = svg; paintDiagram(); }, function () {});
    var detail = null;
    var lastSeq = -1;
    function paintDiagram() {
      if (!detail || !detail.summary) return;
      var nodes = diagram.querySelectorAll('[data-state]');
      for (var i = 0; i < nodes.length; i++) nodes[i].classList.toggle('current', nodes[i].getAttribute('data-state') === detail.summary.state);
    }
    var refreshing = null;
    function refresh() {
      if (refreshing) return refreshing;
      refreshing = api('/api/runs/' + encodeURIComponent(key)).then(function (data) {
        refreshing = null;
        if (!alive) return;
        detail = data;
        renderSummary(summary, data);
        renderActions(actions, data, key, message, refresh);
        renderTranscript(transcript, data.transcript);
        renderTimeline(timeline, data, key, message);
        renderLedger(ledger, data.ledger);
        paintDiagram();
        if (lastSeq < 0 && data.summary) startLive(data.summary.lastSeq);
      }, function (error) {
        refreshing = null;
        summary.textContent = error.message;
      });
      return refreshing;
    }
    var pending = null;
    function soon() {
      if (pending) return;
      pending = setTimeout(function () { pending = null; refresh(); }, 100);
    }
    var controller = null;
    function startLive(from) {
      lastSeq = from;
      connect();
    }
    // EventSource cannot send a header: the stream is read with fetch, which sends the token and
    // the Last-Event-ID of the last record seen, so a page that reconnects misses nothing.
    function connect() {
      if (!alive) return;
      controller = new AbortController();
      fetch('/api/runs/' + encodeURIComponent(key) + '/events', { headers: { authorization: 'Bearer ' + token, 'last-event-id': String(lastSeq) }, signal: controller.signal }).then(function (response) {
        if (!response.ok || !response.body) throw new Error('HTTP ' + response.status);
        liveStatus.textContent = 'live';
        var reader = response.body.getReader();
        var decoder = new TextDecoder();
        var buffer = '';
        function pump() {
          return reader.read().then(function (chunk) {
            if (chunk.done) throw new Error('the stream ended');
            buffer += decoder.decode(chunk.value, { stream: true });
            var at;
            while ((at = buffer.indexOf('\n\n')) !== -1) {
              handle(buffer.slice(0, at));
              buffer = buffer.slice(at + 2);
            }
            return pump();
          });
        }
        return pump();
      }).catch(function () {
        if (!alive) return;
        liveStatus.textContent = 'reconnecting';
        setTimeout(connect, 500);
      });
    }
    function handle(block) {
      var event = 'message', data = '', id = null;
      block.split('\n').forEach(function (line) {
        if (line.indexOf('event:') === 0) event = line.slice(6).trim();
        else if (line.indexOf('data:') === 0) data += line.slice(5).replace(/^ /, '');
        else if (line.indexOf('id:') === 0) id = line.slice(3).trim();
      });
      if (event === 'record') {
        var record = JSON.parse(data);
        if (record.seq <= lastSeq) return;
        lastSeq = record.seq;
        liveLog.appendChild(el('li', { 'data-seq': String(record.seq), text: '#' + record.seq + ' ' + record.state + ' ' + record.event + ' · ' + when(record.at) }));
        liveLog.scrollTop = liveLog.scrollHeight;
        soon();
      } else if (event === 'damage') {
        liveStatus.textContent = 'stopped: ' + JSON.parse(data).error;
      }
    }
    refresh();
    stopView = function () { alive = false; if (controller) controller.abort(); };
  }

  function renderSummary(box, data) {
    box.textContent = '';
    var s = data.summary;
    if (data.damage) box.appendChild(el('p', { class: 'message damage', id: 'damage', text: 'Damaged journal, shown read-only as far as it can be read: ' + data.damage }));
    if (!s) return;
    box.appendChild(el('h2', null, ['Run ', el('code', { text: s.runId }), ' ', el('span', { id: 'run-state', class: 'cat', 'data-state': s.state, text: s.state })]));
    var facts = [
      ['task', s.task], ['turn', s.turn + ' of ' + s.maxTurns], ['tokens', String(s.tokens)], ['cost', usd(s.costUsd)],
      ['last save', 'record ' + s.lastSeq + ' at ' + when(s.lastSaveAt)], ['store', data.location],
    ];
    if (s.finalText) facts.push(['answer', s.finalText]);
    if (s.failure) facts.push(['failure', s.failure]);
    if (data.readOnly) facts.push(['read-only', data.readOnly]);
    if (data.lineage.forkedFrom) facts.push(['forked from', 'run ' + data.lineage.forkedFrom.runId + ' at its record ' + data.lineage.forkedFrom.seq + ' (' + data.lineage.forkedFrom.location + ')']);
    data.lineage.forks.forEach(function (fork) { facts.push(['fork', 'at record ' + fork.seq + ': run ' + fork.runId + ' (' + fork.location + ')']); });
    if (data.status) data.status.decided.forEach(function (call) { facts.push(['decided', call.tool_use_id + ' ' + call.name + ' ' + call.verdict + ' by ' + call.by + (call.reason ? ' (' + call.reason + ')' : '')]); });
    if (data.status && data.status.controls) data.status.controls.forEach(function (request) { facts.push([request.kind === 'pause' ? 'paused' : 'cancel asked', 'by ' + request.by]); });
    if (data.status && data.status.cancellation) facts.push(['cancelled', 'by ' + data.status.cancellation.by + (data.status.cancellation.reason ? ': ' + data.status.cancellation.reason : '')]);
    var list = el('dl', { id: 'facts' });
    facts.forEach(function (fact) { list.appendChild(el('dt', { text: fact[0] })); list.appendChild(el('dd', { text: fact[1] })); });
    var called = data.lineage.calledBy;
    if (called) {
      list.appendChild(el('dt', { text: 'called by' }));
      list.appendChild(el('dd', { id: 'called-by' }, [runLink(called.runId, called.key), ' (its call ' + called.toolUseId + ')']));
    }
    box.appendChild(list);
    if (data.lineage.children.length) {
      box.appendChild(el('h3', { text: 'Sub-agent runs' }));
      box.appendChild(childTree(data.lineage.children, 'sub-agents'));
    }
  }

  function runLink(runId, key) {
    return key ? el('a', { href: '/runs/' + encodeURIComponent(key), 'data-nav': '', text: runId }) : el('code', { text: runId });
  }

  function childTree(children, id) {
    var list = el('ul', id ? { id: id, class: 'tree' } : { class: 'tree' });
    children.forEach(function (child) {
      list.appendChild(el('li', { 'data-run': child.runId }, [
        runLink(child.runId, child.key), ' ', el('span', { class: 'cat', 'data-state': child.state, text: child.state }),
        ' for call ' + child.toolUseId + ', turn ' + child.turn + ', ' + child.tokens + ' tokens, ' + usd(child.costUsd),
        child.children.length ? childTree(child.children, null) : null,
      ]));
    });
    return list;
  }

  function say(box, ok, text) {
    box.className = 'message ' + (ok ? 'ok' : 'bad');
    box.textContent = text;
  }

  function renderActions(box, data, key, message, refresh) {
    box.textContent = '';
    if (data.readOnly) { box.appendChild(el('p', { class: 'dim', text: 'Read-only: ' + data.readOnly + '.' })); return; }
    box.appendChild(el('h2', { text: 'Waiting for a person or an event' }));
    var waiting = data.pending.filter(function (call) { return !call.given; });
    if (!waiting.length) box.appendChild(el('p', { class: 'dim', id: 'nothing-waits', text: data.pending.length ? 'Decided, not yet taken up by the run.' : 'Nothing waits for a decision or an event.' }));
    waiting.forEach(function (call) {
      var input = el('textarea', { 'aria-label': 'input of ' + call.tool_use_id, 'data-input': call.tool_use_id });
      input.value = JSON.stringify(call.input, null, 2);
      var reason = el('input', { type: 'text', placeholder: call.needs === 'answer' ? 'the answer, or why not' : call.needs === 'wait' ? 'why stop waiting (to stop it)' : 'why not (for a denial)', 'data-reason': call.tool_use_id });
      var send = function (body) {
        body.toolUseId = call.tool_use_id;
        api('/api/runs/' + encodeURIComponent(key) + '/decisions', { method: 'POST', body: body }).then(function (result) {
          say(message, true, call.tool_use_id + ' ' + result.decision.verdict + ' by ' + result.decision.by + ': written to the run\'s inbox; the run takes it up.');
          refresh();
        }, function (error) { say(message, false, error.message); });
      };
      var buttons = [];
      var shown = input;
      if (call.needs === 'answer') {
        shown = el('p', { class: 'question', text: call.input && typeof call.input.question === 'string' ? call.input.question : '' });
        buttons.push(el('button', { type: 'button', 'data-action': 'answer', text: 'Answer', onclick: function () { send({ verdict: 'answered', text: reason.value }); } }));
      } else if (call.needs === 'wait') {
        // A wait ends at its time or with its event; a person may send the event, or stop the wait.
        shown = null;
        if (call.event) {
          var eventData = el('textarea', { 'aria-label': 'data of the event ' + call.event, 'data-signal': call.tool_use_id, placeholder: 'the event\'s data, as JSON (optional)' });
          shown = eventData;
          buttons.push(el('button', { type: 'button', 'data-action': 'signal', text: 'Send the event ' + call.event, onclick: function () {
            var sent = null;
            if (eventData.value.trim()) {
              try { sent = JSON.parse(eventData.value); } catch (error) { say(message, false, 'The event\'s data is not JSON: ' + error.message); return; }
            }
            api('/api/runs/' + encodeURIComponent(key) + '/signals', { method: 'POST', body: { name: call.event, data: sent, toolUseId: call.tool_use_id } }).then(function (result) {
              say(message, true, 'event ' + result.signal.name + ' sent by ' + result.signal.by + (result.delivery.outcome === 'taken' ? ': already taken by ' + result.delivery.tool_use_id + ' (a signal is taken once)' : ': the wait takes it.'));
              refresh();
            }, function (error) { say(message, false, error.message); });
          } }));
        }
      } else {
        buttons.push(el('button', { type: 'button', 'data-action': 'approve', text: 'Approve', onclick: function () { send({ verdict: 'approved' }); } }));
        buttons.push(el('button', { type: 'button', 'data-action': 'approve-edited', text: 'Approve with the edited input', onclick: function () {
          var edited;
          try { edited = JSON.parse(input.value); } catch (error) { say(message, false, 'The edited input is not JSON: ' + error.message); return; }
          send({ verdict: 'approved', input: edited });
        } }));
      }
      buttons.push(reason);
      buttons.push(el('button', { type: 'button', 'data-action': 'deny', text: call.needs === 'wait' ? 'Stop the wait' : 'Deny', onclick: function () {
        if (!reason.value.trim()) { say(message, false, call.needs === 'wait' ? 'Stopping a wait needs a reason (the model is told it).' : 'A denial needs a reason (the model is told it).'); return; }
        send({ verdict: 'denied', reason: reason.value });
      } }));
      box.appendChild(el('div', { class: 'decision', 'data-call': call.tool_use_id, 'data-needs': call.needs, 'data-run': call.run || null }, [
        el('div', null, [el('code', { text: call.tool_use_id }), ' ', el('strong', { text: call.name }), ' waits for ' + call.waitsFor + (call.since ? ' since ' + when(call.since) : ''), call.run ? el('span', { class: 'dim', 'data-in-run': call.run, text: ' (in its sub-agent run ' + call.run + ')' }) : null]),
        shown,
        el('div', { class: 'buttons' }, buttons),
      ]));
    });
    var finished = data.summary && ['done', 'failed', 'cancelled'].indexOf(data.summary.state) !== -1;
    if (finished) return;
    var cancelReason = el('input', { type: 'text', placeholder: 'why cancel (optional)', id: 'cancel-reason' });
    var control = function (kind, body) {
      api('/api/runs/' + encodeURIComponent(key) + '/' + kind, { method: 'POST', body: body || {} }).then(function (result) {
        say(message, true, kind + ': ' + result.outcome + (result.request && result.request.by ? ' (by ' + result.request.by + ')' : ''));
        refresh();
      }, function (error) { say(message, false, error.message); });
    };
    box.appendChild(el('h2', { text: 'Controls' }));
    box.appendChild(el('div', { class: 'controls' }, [
      cancelReason,
      el('button', { type: 'button', 'data-action': 'cancel', text: 'Cancel the run', onclick: function () { control('cancel', { reason: cancelReason.value }); } }),
      el('button', { type: 'button', 'data-action': 'pause', text: 'Pause', onclick: function () { control('pause'); } }),
      el('button', { type: 'button', 'data-action': 'unpause', text: 'Unpause', onclick: function () { control('unpause'); } }),
    ]));
  }

  function entryWords(entry) {
    switch (entry.kind) {
      case 'text': return [entry.role, entry.text];
      case 'thinking': return ['thinking', entry.redacted ? '(redacted by the API)' : entry.text];
      case 'tool-use': return ['tool call', entry.name + ' ' + entry.id + ' ' + JSON.stringify(entry.input, null, 2)];
      case 'tool-result': return [entry.isError ? 'error' : 'result', entry.name + ' ' + entry.id + ': ' + entry.text + (entry.images ? ' [' + entry.images + ' image(s)]' : '')];
      case 'open-call': return ['open call', entry.name + ' ' + entry.id + ': ' + (entry.waitsFor ? 'waits for ' + (entry.waitsFor === 'answer' ? 'an answer' : entry.waitsFor === 'wait' ? 'its time or its event' : 'approval') : 'no result yet')];
      case 'image': return [entry.role, '[image ' + entry.mediaType + ']'];
      case 'compacted': return ['compacted', 'a summary took the place of the ' + entry.replaced + ' messages above: ' + entry.summary];
      default: return [entry.role || '?', '[' + entry.type + ' block]'];
    }
  }

  function renderLedger(table, rows) {
    table.textContent = '';
    table.appendChild(el('tr', null, ['call', 'tool', 'outcome', 'record', 'content'].map(function (h) { return el('th', { text: h }); })));
    rows.forEach(function (row) {
      table.appendChild(el('tr', { 'data-call': row.toolUseId }, [
        el('td', { text: row.toolUseId }), el('td', { text: row.name }), el('td', { text: row.kind + (row.isError ? ' (error)' : '') }), el('td', { text: String(row.seq) }),
        el('td', { class: 'note', text: row.content }),
      ]));
    });
  }

  function renderTranscript(list, entries) {
    list.textContent = '';
    entries.forEach(function (entry) {
      var words = entryWords(entry);
      var body;
      if (entry.kind === 'thinking' && !entry.redacted) {
        // Thinking is collapsed to its first line; the rest opens on a click.
        body = el('details', { class: 'body' }, [el('summary', { text: (entry.text.split('\n')[0] || '') + ' (' + entry.text.length + ' characters)' }), el('div', { text: entry.text })]);
      } else {
        body = el('div', { class: 'body', text: words[1] });
      }
      list.appendChild(el('li', { class: 'kind-' + (entry.kind === 'tool-result' && entry.isError ? 'error' : entry.kind), 'data-kind': entry.kind }, [el('span', { class: 'label', text: words[0] }), body]));
    });
  }

  // A fork goes into the run's own folder as a new run by id; the message links to it.
  function forkAt(key, seq, message) {
    api('/api/runs/' + encodeURIComponent(key) + '/fork', { method: 'POST', body: { at: seq } }).then(function (made) {
      message.className = 'message ok';
      message.textContent = 'Forked at record ' + seq + ' into run ';
      message.appendChild(el('a', { href: '/runs/' + encodeURIComponent(made.key), 'data-nav': '', id: 'fork-link', text: made.runId }));
      message.appendChild(document.createTextNode(' (' + made.records + ' records, state ' + made.state + '): resume it as its parent was started.'));
    }, function (error) { say(message, false, error.message); });
  }

  function renderTimeline(table, data, key, message) {
    table.textContent = '';
    table.appendChild(el('tr', null, ['#', 'time', 'turn', 'state', 'event', 'tools', 'note', ''].map(function (h) { return el('th', { text: h }); })));
    var processes = data.processes || [];
    data.steps.forEach(function (step, index) {
      var notes = [];
      var proc = processes[step.process];
      var boundary = index > 0 && proc && proc.firstSeq === step.seq && proc.resume;
      if (boundary) notes.push('resumed (pid ' + (proc.pid === null ? '?' : proc.pid) + ') after record ' + proc.resume.fromSeq + (proc.resume.decisions.length ? ': ' + proc.resume.decisions.map(function (d) { return d.toolUseId + ' ' + d.name + ' ' + d.phrase; }).join('; ') : ''));
      if (step.reconcile) notes.push('reconcile ' + step.reconcile.toolUseId + ': ' + step.reconcile.phrase);
      step.reused.forEach(function (r) { notes.push('reused ' + r.toolUseId + ': ' + r.phrase); });
      if (step.waiting) notes.push(step.waiting.toolUseId + ' waits for ' + step.waiting.needs);
      step.decided.forEach(function (words) { notes.push(words); });
      table.appendChild(el('tr', { class: boundary ? 'boundary' : null, 'data-seq': String(step.seq) }, [
        el('td', { text: String(step.seq) }), el('td', { title: when(step.at), text: clock(step.at) }), el('td', { text: String(step.turn) }),
        el('td', { text: step.state }), el('td', { text: step.event }), el('td', { text: step.tools.join(', ') }), el('td', { class: 'note', text: notes.join('; ') }),
        el('td', null, [data.readOnly || data.source !== 'folder' ? null : el('button', { type: 'button', 'data-action': 'fork', title: 'a new run from this record', text: 'fork', onclick: function () { forkAt(key, step.seq, message); } })]),
      ]));
    });
  }

  route();
})();
`;
