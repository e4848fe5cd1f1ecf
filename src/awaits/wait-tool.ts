/**
 * The wait tool: the model sleeps until a time (`{ seconds }`, `{ until }`) or until an event
 * (`{ event, timeoutSeconds? }`) that `durable-agent signal` (or sendSignal) delivers. A wait is
 * a decision made by the clock or by a signal: its calls are flagged `needs: 'wait'` as the
 * reply arrives, the run waits in awaitingDecision as for a person, and the DECISION record
 * that ends the wait is the call's result. So the deadline is in the journal (the input, in the
 * reply's record, and the time the wait began, in its DECISION_NEEDED record), never taken
 * again from the clock on resume: a resume before it waits the rest, one after it goes on at once.
 */
import type { ToolDefinition } from '../tools/tool.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

export const WAIT = 'wait';

/** What marks a tool as the wait tool, whatever copies of it a program makes (a spread keeps it). */
const WAIT_TOOL = Symbol.for('durable-agent.wait-tool');

/** The longest wait by default: a week. */
export const DEFAULT_MAX_WAIT_SECONDS = 7 * 86_400;

/** An event's name and a signal's id: what the API allows in a tool_use_id, so either can name a file. */
const SIGNAL_WORD = /^[A-Za-z0-9_-]{1,128}$/;

export function isSignalWord(word: unknown): word is string {
  return typeof word === 'string' && SIGNAL_WORD.test(word);
}

export type WaitInput = { seconds: number } | { until: string } | { event: string; timeoutSeconds?: number };

/** What a wait call waits for, from its input and the time it began to wait. */
export interface WaitPlan {
  /** The event it waits for, or null for a wait on the clock alone. */
  event: string | null;
  /** When it ends without its event (epoch ms), or null for an event wait with no timeout. */
  wakeAt: number | null;
  /** The input's words: "30 s", "until 2026-05-01T09:00:00.000Z", "event deploy-done (at most 60 s)". */
  words: string;
}

export interface WaitToolOptions {
  /** The longest `seconds` or `timeoutSeconds` the model may ask for (default a week). */
  maxSeconds?: number | undefined;
}

/** A wait call's input that is not a wait: said as the call's error result (the call is then run, not waited on). */
export class WaitInputError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'WaitInputError';
  constructor(readonly problem: string) {
    super(`This wait cannot be done: ${problem}. Call wait again with exactly one of { seconds }, { until: ISO time } or { event: NAME, timeoutSeconds? }.`);
  }
}

/**
 * The wait tool, for a run's or an agent definition's `tools`: its calls wait (they are never
 * run) through the run's decisions; a resume must offer it again (the run's tools are pinned).
 */
export function waitTool(options: WaitToolOptions = {}): ToolDefinition<WaitInput> {
  const maxSeconds = options.maxSeconds ?? DEFAULT_MAX_WAIT_SECONDS;
  if (!(Number.isFinite(maxSeconds) && maxSeconds > 0)) throw new RangeError(`maxSeconds must be a number of seconds above 0 (got ${String(maxSeconds)})`);
  const seconds = { type: 'number', exclusiveMinimum: 0, maximum: maxSeconds };
  const tool: ToolDefinition<WaitInput> & { [WAIT_TOOL]: true } = {
    [WAIT_TOOL]: true,
    name: WAIT,
    description:
      'Wait, without using any tokens, until a time or until an event arrives; the run sleeps and may be stopped and resumed meanwhile. ' +
      'Give exactly one of: seconds (how long to wait), until (an ISO 8601 time to wait until), or event (the name of an event ' +
      'someone will send, with timeoutSeconds to stop waiting after that long). The result says what ended the wait, with the event\'s data.',
    inputSchema: {
      type: 'object',
      properties: {
        seconds: { ...seconds, description: 'How long to wait, in seconds.' },
        until: { type: 'string', minLength: 1, description: 'An ISO 8601 time (e.g. 2026-05-01T09:00:00Z) to wait until.' },
        event: { type: 'string', pattern: SIGNAL_WORD.source, description: 'The name of the event to wait for (letters, digits, "_" and "-").' },
        timeoutSeconds: { ...seconds, description: 'With event: stop waiting after this many seconds.' },
      },
      additionalProperties: false,
    },
    readOnly: true,
    run(input) {
      // Only a call whose input is not a wait gets here (a wait is flagged and waited on, never run).
      throw new WaitInputError(waitInputProblem(input, maxSeconds) ?? 'the run did not wait for it (this is a bug: a wait call is never run)');
    },
  };
  return tool;
}

/** Whether the tool is (a copy of) the wait tool. */
export function isWaitTool(tool: ToolDefinition | undefined): boolean {
  return tool !== undefined && (tool as { [WAIT_TOOL]?: unknown })[WAIT_TOOL] === true;
}

/** Why the input is not a wait, or null. */
export function waitInputProblem(input: unknown, maxSeconds = Number.POSITIVE_INFINITY): string | null {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return 'its input is not an object';
  const given = input as Record<string, unknown>;
  const kinds = (['seconds', 'until', 'event'] as const).filter((key) => given[key] !== undefined);
  if (kinds.length !== 1) return kinds.length === 0 ? 'it gives none of seconds, until and event' : `it gives ${kinds.join(' and ')}; give one`;
  const seconds = (value: unknown, key: string) =>
    typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= maxSeconds ? null : `${key} must be a number of seconds above 0 and at most ${maxSeconds}`;
  if (given.timeoutSeconds !== undefined && kinds[0] !== 'event') return 'timeoutSeconds goes with event only';
  switch (kinds[0]) {
    case 'seconds':
      return seconds(given.seconds, 'seconds');
    case 'until':
      return typeof given.until === 'string' && Number.isFinite(Date.parse(given.until)) ? null : `until must be an ISO 8601 time, not ${JSON.stringify(given.until)}`;
    default:
      if (!isSignalWord(given.event)) return `event must be a name of letters, digits, "_" and "-" (at most 128), not ${JSON.stringify(given.event)}`;
      return given.timeoutSeconds === undefined ? null : seconds(given.timeoutSeconds, 'timeoutSeconds');
  }
}

/** The wait a call's input asks for, begun at `since` (its DECISION_NEEDED record); null for an input that is not a wait. */
export function waitPlanOf(input: unknown, since: number): WaitPlan | null {
  if (waitInputProblem(input) !== null) return null;
  const given = input as { seconds?: number; until?: string; event?: string; timeoutSeconds?: number };
  if (given.seconds !== undefined) return { event: null, wakeAt: since + Math.round(given.seconds * 1000), words: `${formatSeconds(given.seconds)}` };
  if (given.until !== undefined) {
    const at = Date.parse(given.until);
    return { event: null, wakeAt: at, words: `until ${new Date(at).toISOString()}` };
  }
  const timeout = given.timeoutSeconds;
  return {
    event: given.event!,
    wakeAt: timeout === undefined ? null : since + Math.round(timeout * 1000),
    words: `event ${given.event}${timeout === undefined ? '' : ` (at most ${formatSeconds(timeout)})`}`,
  };
}

/** 30 → "30 s", 0.5 → "0.5 s", 5400 → "1 h 30 min". */
export function formatSeconds(seconds: number): string {
  if (seconds < 60 || !Number.isInteger(seconds)) return `${Number(seconds.toFixed(3))} s`;
  const parts: string[] = [];
  let rest = seconds;
  for (const [unit, size] of [['d', 86_400], ['h', 3_600], ['min', 60], ['s', 1]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)} ${unit}`);
      rest %= size;
    }
  }
  return parts.join(' ');
}
