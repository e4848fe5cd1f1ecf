/**
 * What a person does to a run from its page: a decision on each call that waits (approve, with
 * the edited input or not; deny; answer; send a wait's event or stop the wait), the controls
 * (cancel, pause, unpause) and a fork at a record of the timeline. Each says how it went in the
 * message box and reads the run again.
 */
import type { PendingCall, RunDetail } from '../run-detail.ts';
import type { ConsoleApi, ControlKind, DecisionBody } from './api.ts';
import { el, say } from './dom.ts';
import { when } from './format.ts';

/** Where the forms of a run's page act and report. */
export interface RunActionContext {
  api: ConsoleApi;
  key: string;
  /** The message box: how the last action went. */
  message: HTMLElement;
  /** Reads the run again. */
  refresh(): void;
}

const FINISHED = ['done', 'failed', 'cancelled'];
/** Stopped at a limit: no process drives it, so there is nothing to pause; a resume with more goes on. */
const STOPPED = ['stoppedAtMaxTurns', 'stoppedAtBudget'];

/** Whether the run has ended (done, failed, cancelled): nothing is decided or controlled any more. */
export function isFinished(data: RunDetail): boolean {
  return data.summary !== null && FINISHED.includes(data.summary.state);
}

/**
 * The controls that apply to the run as it stands: none once it ended; cancel until a cancel was
 * asked; unpause only while it is paused, pause only while it is not (nor stopped at a limit).
 */
export function controlsFor(data: RunDetail): ControlKind[] {
  if (data.readOnly || !data.summary || isFinished(data)) return [];
  const asked = data.status?.controls ?? [];
  const paused = asked.some((request) => request.kind === 'pause');
  const cancelAsked = asked.some((request) => request.kind === 'cancel');
  const kinds: ControlKind[] = [];
  if (!cancelAsked) kinds.push('cancel');
  if (paused) kinds.push('unpause');
  else if (!cancelAsked && !STOPPED.includes(data.summary.state)) kinds.push('pause');
  return kinds;
}

/** Fills the box with what may be done to the run now; false when nothing may (the box is then left empty). */
export function renderActions(box: HTMLElement, data: RunDetail, context: RunActionContext): boolean {
  const typed = typedIn(box);
  box.textContent = '';
  if (data.readOnly) {
    box.appendChild(el('p', { class: 'dim', text: `Read-only: ${data.readOnly}.` }));
    return true;
  }
  const shown = fillActions(box, data, context);
  typeBack(box, typed);
  return shown;
}

function fillActions(box: HTMLElement, data: RunDetail, context: RunActionContext): boolean {
  const waiting = data.pending.filter((call) => !call.given);
  const kinds = controlsFor(data);
  // An ended run has nothing left to decide or control: no empty form is shown for it.
  if (isFinished(data) && !waiting.length) return false;
  box.appendChild(el('h2', { text: 'Waiting for a person or an event' }));
  if (!waiting.length) box.appendChild(el('p', { class: 'dim', id: 'nothing-waits', text: data.pending.length ? 'Decided, not yet taken up by the run.' : 'Nothing waits for a decision or an event.' }));
  for (const call of waiting) box.appendChild(decisionForm(call, context));
  if (!kinds.length) return true;
  box.appendChild(el('h2', { text: 'Controls' }));
  box.appendChild(controls(kinds, context));
  return true;
}

/** The form of one call that waits: what it asks, and the buttons its kind of wait takes. */
function decisionForm(call: PendingCall, { api, key, message, refresh }: RunActionContext): HTMLElement {
  const input = el('textarea', { 'aria-label': `input of ${call.tool_use_id}`, 'data-input': call.tool_use_id, 'data-typed': `input ${call.tool_use_id}` });
  input.value = JSON.stringify(call.input, null, 2);
  const reason = el('input', {
    type: 'text',
    placeholder: call.needs === 'answer' ? 'the answer, or why not' : call.needs === 'wait' ? 'why stop waiting (to stop it)' : 'why not (for a denial)',
    'data-reason': call.tool_use_id,
    'data-typed': `reason ${call.tool_use_id}`,
  });
  const send = (body: DecisionBody) => {
    api.decide(key, call.tool_use_id, body).then(
      (result) => {
        say(message, true, `${call.tool_use_id} ${result.decision.verdict} by ${result.decision.by}: written to the run's inbox; the run takes it up.`);
        refresh();
      },
      (error: Error) => say(message, false, error.message),
    );
  };
  const buttons: HTMLElement[] = [];
  let shown: HTMLElement | null = input;
  if (call.needs === 'answer') {
    const question = (call.input as { question?: unknown } | null)?.question;
    shown = el('p', { class: 'question', text: typeof question === 'string' ? question : '' });
    buttons.push(el('button', { type: 'button', 'data-action': 'answer', text: 'Answer', onclick: () => send({ verdict: 'answered', text: reason.value }) }));
  } else if (call.needs === 'wait') {
    // A wait ends at its time or with its event; a person may send the event, or stop the wait.
    shown = null;
    if (call.event) {
      const event = call.event;
      const eventData = el('textarea', { 'aria-label': `data of the event ${event}`, 'data-signal': call.tool_use_id, 'data-typed': `signal ${call.tool_use_id}`, placeholder: "the event's data, as JSON (optional)" });
      shown = eventData;
      const sendEvent = () => {
        let sent: unknown = null;
        if (eventData.value.trim()) {
          try {
            sent = JSON.parse(eventData.value);
          } catch (error) {
            say(message, false, `The event's data is not JSON: ${(error as Error).message}`);
            return;
          }
        }
        api.signal(key, { name: event, data: sent, toolUseId: call.tool_use_id }).then(
          (result) => {
            say(message, true, `event ${result.signal.name} sent by ${result.signal.by}${result.delivery.outcome === 'taken' ? `: already taken by ${result.delivery.tool_use_id} (a signal is taken once)` : ': the wait takes it.'}`);
            refresh();
          },
          (error: Error) => say(message, false, error.message),
        );
      };
      buttons.push(el('button', { type: 'button', 'data-action': 'signal', text: `Send the event ${event}`, onclick: sendEvent }));
    }
  } else {
    buttons.push(el('button', { type: 'button', 'data-action': 'approve', text: 'Approve', onclick: () => send({ verdict: 'approved' }) }));
    const approveEdited = () => {
      let edited: unknown;
      try {
        edited = JSON.parse(input.value);
      } catch (error) {
        say(message, false, `The edited input is not JSON: ${(error as Error).message}`);
        return;
      }
      send({ verdict: 'approved', input: edited });
    };
    buttons.push(el('button', { type: 'button', 'data-action': 'approve-edited', text: 'Approve with the edited input', onclick: approveEdited }));
  }
  buttons.push(reason);
  const deny = () => {
    if (!reason.value.trim()) {
      say(message, false, call.needs === 'wait' ? 'Stopping a wait needs a reason (the model is told it).' : 'A denial needs a reason (the model is told it).');
      return;
    }
    send({ verdict: 'denied', reason: reason.value });
  };
  buttons.push(el('button', { type: 'button', 'data-action': 'deny', text: call.needs === 'wait' ? 'Stop the wait' : 'Deny', onclick: deny }));
  return el('div', { class: 'decision', 'data-call': call.tool_use_id, 'data-needs': call.needs, 'data-run': call.run || null }, [
    el('div', null, [
      el('code', { text: call.tool_use_id }),
      ' ',
      el('strong', { text: call.name }),
      ` waits for ${call.waitsFor}${call.since ? ` since ${when(call.since)}` : ''}`,
      call.run ? el('span', { class: 'dim', 'data-in-run': call.run, text: ` (in its sub-agent run ${call.run})` }) : null,
    ]),
    shown,
    el('div', { class: 'buttons' }, buttons),
  ]);
}

/** Cancel (with a reason or none), pause and unpause: those of `kinds`. */
function controls(kinds: readonly ControlKind[], { api, key, message, refresh }: RunActionContext): HTMLElement {
  const control = (kind: ControlKind, body: { reason?: string } = {}) => {
    api.control(key, kind, body).then(
      (result) => {
        say(message, true, `${kind}: ${result.outcome}${result.request?.by ? ` (by ${result.request.by})` : ''}`);
        refresh();
      },
      (error: Error) => say(message, false, error.message),
    );
  };
  const parts: HTMLElement[] = [];
  if (kinds.includes('cancel')) {
    const cancelReason = el('input', { type: 'text', placeholder: 'why cancel (optional)', id: 'cancel-reason', 'data-typed': 'cancel-reason' });
    parts.push(cancelReason, el('button', { type: 'button', 'data-action': 'cancel', text: 'Cancel the run', onclick: () => control('cancel', { reason: cancelReason.value }) }));
  }
  if (kinds.includes('pause')) parts.push(el('button', { type: 'button', 'data-action': 'pause', text: 'Pause', onclick: () => control('pause') }));
  if (kinds.includes('unpause')) parts.push(el('button', { type: 'button', 'data-action': 'unpause', text: 'Unpause', onclick: () => control('unpause') }));
  return el('div', { class: 'controls' }, parts);
}

/** A fork goes into the run's own folder as a new run by id; the message links to it. */
export function forkAt({ api, key, message }: RunActionContext, seq: number): void {
  api.fork(key, seq).then(
    (made) => {
      message.className = 'message ok';
      message.textContent = `Forked at record ${seq} into run `;
      message.appendChild(el('a', { href: `/runs/${encodeURIComponent(made.key)}`, 'data-nav': '', id: 'fork-link', text: made.runId }));
      message.appendChild(document.createTextNode(` (${made.records} records, state ${made.state}): resume it as its parent was started.`));
    },
    (error: Error) => say(message, false, error.message),
  );
}

type TypedField = HTMLInputElement | HTMLTextAreaElement;

interface Typed {
  value: string;
  focused: boolean;
  start: number | null;
  end: number | null;
}

/**
 * What a person typed in the forms (a reason, an answer, an edited input), with the place of the
 * caret: the forms are drawn again each time the run writes a record, and what was typed must
 * not go with them. A field counts as typed once an input event came from it.
 */
function typedIn(box: HTMLElement): Map<string, Typed> {
  if (box.dataset.watchesTyping !== '1') {
    box.addEventListener('input', (event) => {
      const field = event.target as HTMLElement;
      if (field.dataset.typed !== undefined) field.dataset.edited = '1';
    });
    box.dataset.watchesTyping = '1';
  }
  const typed = new Map<string, Typed>();
  for (const field of Array.from(box.querySelectorAll<TypedField>('[data-typed][data-edited="1"]'))) {
    typed.set(field.dataset.typed!, { value: field.value, focused: document.activeElement === field, start: field.selectionStart, end: field.selectionEnd });
  }
  return typed;
}

/** Puts what was typed back into the fields drawn again, the caret where it was. */
function typeBack(box: HTMLElement, typed: ReadonlyMap<string, Typed>): void {
  if (typed.size === 0) return;
  for (const field of Array.from(box.querySelectorAll<TypedField>('[data-typed]'))) {
    const kept = typed.get(field.dataset.typed!);
    if (!kept) continue;
    field.value = kept.value;
    field.dataset.edited = '1';
    if (kept.focused) {
      field.focus();
      if (kept.start !== null) field.setSelectionRange(kept.start, kept.end ?? kept.start);
    }
  }
}
