/**
 * A deterministic estimate of what a request costs in input tokens: its JSON length / 4. Real
 * tokenizers differ (code and JSON run nearer 3 characters a token), which is why the trigger
 * is a ratio well below the window, and why a real reply's own count, when there is one, wins
 * (see ContextCompaction). Each message is measured once: messages are never changed in place.
 */
import type { Message } from '../../machines/agent-loop.types.ts';
import type { ToolSpec } from './model.ts';

export const CHARS_PER_TOKEN = 4;

const measured = new WeakMap<object, number>();

function charsOf(value: object): number {
  let chars = measured.get(value);
  if (chars === undefined) {
    chars = JSON.stringify(value).length;
    measured.set(value, chars);
  }
  return chars;
}

export function estimateMessageTokens(message: Message): number {
  return Math.ceil(charsOf(message) / CHARS_PER_TOKEN);
}

/** The estimate of a whole request: system prompt, tool definitions and messages. */
export function estimateRequestTokens(system: string | null, tools: readonly ToolSpec[], messages: readonly Message[]): number {
  let chars = (system?.length ?? 0) + charsOf(tools);
  for (const message of messages) chars += charsOf(message);
  return Math.ceil(chars / CHARS_PER_TOKEN);
}
