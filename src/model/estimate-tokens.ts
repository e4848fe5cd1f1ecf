/**
 * A deterministic estimate of what a request costs in input tokens: its JSON length / 4. Real
 * tokenizers differ (code and JSON run nearer 3 characters a token), which is why the trigger
 * is a ratio well below the window, and why a real reply's own count, when there is one, wins
 * (see ContextCompaction). Each message is measured once: messages are never changed in place.
 * An image is not read as its base64 text: the API scales it to about 1,600 tokens at most; a PDF
 * costs about 3,000 tokens a page (its text and an image of the page).
 */
import type { Message } from '../../machines/agent-loop.types.ts';
import type { ToolSpec } from './model.ts';
import { visitPayloadBlocks } from '../util/rich-blocks.ts';

export const CHARS_PER_TOKEN = 4;
export const IMAGE_TOKENS = 1_600;
export const PDF_PAGE_TOKENS = 3_000;

const measured = new WeakMap<object, number>();

function charsOf(value: object): number {
  let chars = measured.get(value);
  if (chars === undefined) {
    chars = JSON.stringify(value).length + payloadCorrection((value as Partial<Message>).content);
    measured.set(value, chars);
  }
  return chars;
}

/** What a message's base64 images and PDFs cost beyond (or below) their text's length, in characters. */
function payloadCorrection(content: unknown): number {
  let correction = 0;
  visitPayloadBlocks(content, (block) => {
    const source = block.source as { type?: unknown; media_type?: unknown; data?: unknown } | undefined;
    if (source?.type !== 'base64' || typeof source.data !== 'string') return;
    if (block.type === 'image') correction += IMAGE_TOKENS * CHARS_PER_TOKEN - source.data.length;
    else if (source.media_type === 'application/pdf') {
      const pages = pdfPages(source.data);
      if (pages > 0) correction += pages * PDF_PAGE_TOKENS * CHARS_PER_TOKEN - source.data.length;
    }
  });
  return correction;
}

/** The pages a PDF says it has (its page objects); 0 when they cannot be told (then its length counts). */
function pdfPages(data: string): number {
  return Buffer.from(data, 'base64').toString('latin1').match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
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
