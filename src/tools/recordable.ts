/**
 * Turns whatever a tool returned or threw into something the ledger can hold. The ledger is JSON:
 * a BigInt, a circular object, a function or a toJSON() that throws has no JSON form, and a
 * thrown value need not be an Error (a string, a symbol, an object without a prototype). None of
 * these may escape the loop once the tool has run: its effect happened, and a resume must know.
 */
import { inspect } from 'node:util';
import type { ContentBlock, PendingCall, ToolOutcome, ToolResultContent } from '../../machines/agent-loop.types.ts';
import { API_LIMIT, sendableContent } from './sendable.ts';

export type RecordableContent = { content: ToolResultContent } | { unrecordable: string };

/**
 * A tool's return value as tool_result content: text as is, content blocks as JSON holds them
 * (what is sent and what is stored are then the same), anything else as JSON text. Images and
 * documents must be ones the Messages API takes (sendable.ts): a result it would refuse would
 * be sent again with every later request of the run, and refused each time.
 */
export function recordableContent(value: unknown): RecordableContent {
  if (typeof value === 'string') return { content: value };
  if (value === undefined || value === null) return { content: '(no output)' };
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    return { unrecordable: whyNotJson(error) };
  }
  if (json === undefined) return { unrecordable: `it returned ${kindOf(value)}, which has no JSON form` };
  const copy: unknown = JSON.parse(json);
  if (isContentBlockList(copy)) {
    const sendable = sendableContent(copy);
    return 'refused' in sendable ? { unrecordable: sendable.refused } : { content: sendable.content };
  }
  return { content: JSON.stringify(copy, null, 2) };
}

/** The ledger entry of a call that ran but whose result cannot be stored: it ran, say so, go on. */
export function unrecordableOutcome(call: PendingCall, why: string): ToolOutcome {
  // A result over the API's limits (sendable.ts) could be had smaller; one without a JSON form could not.
  const advice = why.startsWith(API_LIMIT) ? 'Call it again only for less (a smaller image, fewer pages), if you need to see it.' : 'Do not call it again just to see the result.';
  return {
    tool_use_id: call.id,
    name: call.name,
    kind: 'ran',
    content: `${call.name} ran, but its result could not be recorded: ${why}. Whatever it does took effect; the result itself is lost. ${advice}`,
    is_error: true,
  };
}

/** What a tool threw, as text, whatever it threw; never throws itself. */
export function describeThrown(thrown: unknown): string {
  try {
    if (thrown instanceof Error) {
      const message: unknown = thrown.message;
      return typeof message === 'string' && message !== '' ? message : `${thrown.name || 'Error'} (without a message)`;
    }
    if (typeof thrown === 'string') return thrown;
    if (typeof thrown === 'symbol') return `it threw ${thrown.toString()}`;
    if (thrown === null || (typeof thrown !== 'object' && typeof thrown !== 'function')) return `it threw ${String(thrown)}`;
    return `it threw a value that is not an Error: ${clip(inspect(thrown, { depth: 2, breakLength: Infinity, maxArrayLength: 20, maxStringLength: 200 }))}`;
  } catch {
    return 'it threw a value that cannot be described';
  }
}

function whyNotJson(error: unknown): string {
  const text = describeThrown(error).replace(/\s+/g, ' ').trim();
  if (/BigInt/i.test(text)) return `it holds a BigInt, which JSON cannot represent (${text})`;
  if (/circular/i.test(text)) return `it refers to itself (${clip(text)})`;
  return `turning it into JSON failed: ${clip(text)}`;
}

function kindOf(value: unknown): string {
  return typeof value === 'function' ? 'a function' : typeof value === 'symbol' ? 'a symbol' : 'a value';
}

function isContentBlockList(value: unknown): value is ContentBlock[] {
  return Array.isArray(value) && value.every((block) => block !== null && typeof block === 'object' && typeof (block as ContentBlock).type === 'string');
}

function clip(text: string, max = 400): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
