/**
 * The chat page: starts a run of the `notes` agent, follows its events with the client's
 * followRun (which reconnects by itself, with the id of the last record it has, and never yields a
 * recorded event twice), and shows them as they come: the model's text as it streams, then the
 * reply as recorded; the tool calls and their results; Approve and Deny when a call waits for a
 * person; the end. The run's id is kept in the address (?run=ID): a reload follows it again from
 * its first record, and the page is drawn again from the journal alone.
 */
import { createClient } from 'durable-agent/client';

const AGENT = 'notes';
const token = document.querySelector('meta[name="api-token"]').content;
const client = createClient({ baseUrl: location.origin, token });

const log = document.getElementById('log');
const status = document.getElementById('status');
const form = document.getElementById('ask');
const taskBox = document.getElementById('task');
const startButton = document.getElementById('start');

/** Stops the follow in progress when another run is started. */
let following = null;

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const task = taskBox.value.trim();
  if (!task) return;
  startButton.disabled = true;
  try {
    const { run } = await client.startRun({ agent: AGENT, task });
    // In the address: a reload, a bookmark or another tab follows this run.
    history.pushState(null, '', `?run=${encodeURIComponent(run.runId)}`);
    taskBox.value = '';
    follow(run.runId);
  } catch (error) {
    status.textContent = `Not started: ${error.message}`;
  } finally {
    startButton.disabled = false;
  }
});

window.addEventListener('popstate', () => openFromAddress());

function openFromAddress() {
  const runId = new URLSearchParams(location.search).get('run');
  if (runId) follow(runId);
  else {
    following?.abort();
    log.replaceChildren();
    status.textContent = 'Ask something to start a run.';
  }
}

/** Follows a run from its first record: the log is drawn again from its events alone. */
async function follow(runId) {
  following?.abort();
  const stop = new AbortController();
  following = stop;
  const view = new RunView(runId);
  log.replaceChildren();
  status.textContent = `Run ${runId}`;
  try {
    const run = await client.getRun(runId, { signal: stop.signal });
    view.add('task', run.task);
    for await (const event of client.followRun(runId, { signal: stop.signal, reconnect: { maxAttempts: 30, maxDelayMs: 5_000 }, idleTimeoutMs: 45_000 })) {
      view.show(event);
    }
  } catch (error) {
    if (stop.signal.aborted) return;
    status.textContent = `Stopped following run ${runId}: ${error.message} (reload the page to follow it again)`;
  }
}

/** One run's events as messages in the log. */
class RunView {
  constructor(runId) {
    this.runId = runId;
    /** The message the streamed text goes into, until the recorded reply replaces it. */
    this.live = null;
    /** After a reply, the text of the same reply may still trickle in: left out until the next model call. */
    this.acceptDeltas = true;
    this.calls = new Map();
    this.approval = null;
  }

  add(kind, text) {
    const element = document.createElement('div');
    element.className = `msg ${kind}`;
    if (text !== undefined) element.textContent = text;
    log.append(element);
    element.scrollIntoView({ block: 'nearest' });
    return element;
  }

  show(event) {
    // Any event of a later record than the wait's means the run went on: the buttons go.
    if (this.approval && 'seq' in event && event.seq > this.approval.seq) {
      this.approval.element.remove();
      this.approval = null;
    }
    switch (event.type) {
      case 'state':
        if (event.state === 'awaitingModel') this.acceptDeltas = true;
        status.textContent = `Run ${this.runId}: ${event.state}${event.turn ? `, turn ${event.turn}` : ''}`;
        break;
      case 'text-delta':
        if (!this.acceptDeltas) break;
        this.live ??= this.add('assistant live', '');
        this.live.textContent += event.text;
        break;
      case 'reply':
        this.acceptDeltas = false;
        if (this.live && event.text) {
          this.live.textContent = event.text;
          this.live.className = 'msg assistant reply';
        } else {
          this.live?.remove();
          if (event.text) this.add('assistant reply', event.text);
        }
        this.live = null;
        break;
      case 'tool-call': {
        const element = this.add('tool-call', `→ ${event.name} ${JSON.stringify(event.input)}`);
        element.dataset.name = event.name;
        element.dataset.toolUseId = event.toolUseId;
        this.calls.set(event.toolUseId, { element, name: event.name, input: event.input });
        break;
      }
      case 'tool-result': {
        const call = this.calls.get(event.toolUseId);
        const result = document.createElement('div');
        result.className = `result${event.isError ? ' error' : ''}`;
        result.textContent = `← ${textOf(event.content)}`;
        (call?.element ?? this.add('tool-call')).append(result);
        break;
      }
      case 'waiting':
        if (event.waitingOn.kind === 'call' && event.waitingOn.needs === 'approval') this.askApproval(event);
        else status.textContent = `Run ${this.runId} waits for ${event.waitsFor}`;
        break;
      case 'end': {
        this.live?.remove();
        this.live = null;
        const words = event.category === 'done' ? `Done. ${event.result ?? ''}` : `Ended ${event.category}: ${event.problem ?? ''}`;
        this.add(`end ${event.category === 'done' ? 'done' : 'failed'}`, words);
        status.textContent = `Run ${this.runId} ended (${event.state}).`;
        break;
      }
    }
  }

  askApproval(event) {
    const { toolUseId, name } = event.waitingOn;
    const call = this.calls.get(toolUseId);
    const element = this.add('approval', `${name} waits for your approval: ${JSON.stringify(call?.input ?? {})}`);
    const line = document.createElement('div');
    for (const verdict of ['approve', 'deny']) {
      const button = document.createElement('button');
      button.className = verdict;
      button.textContent = verdict === 'approve' ? 'Approve' : 'Deny';
      button.addEventListener('click', async () => {
        for (const other of line.querySelectorAll('button')) other.disabled = true;
        try {
          // The decision goes to the run's inbox; the run's next events say it went on.
          await client.decide(this.runId, { toolUseId, verdict });
          status.textContent = `${verdict === 'approve' ? 'Approved' : 'Denied'}: the run goes on.`;
        } catch (error) {
          status.textContent = `The decision was not taken: ${error.message}`;
          for (const other of line.querySelectorAll('button')) other.disabled = false;
        }
      });
      line.append(button);
    }
    element.append(line);
    this.approval = { element, seq: event.seq };
    status.textContent = `Run ${this.runId} waits for your decision.`;
  }
}

/** A tool result's content: a string, or blocks of text. */
function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((block) => (block?.type === 'text' ? block.text : JSON.stringify(block))).join('\n');
  return JSON.stringify(content);
}

// Last: the class above is defined by now.
openFromAddress();
