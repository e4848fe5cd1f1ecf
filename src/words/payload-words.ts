/** A tool result's images and documents in words, for the readers of a run (history, the visualizer): never their bytes. */
import type { ToolResultContent } from '../../machines/agent-loop.types.ts';
import { type Payload, payloadOf } from '../util/rich-blocks.ts';
import { formatBytes } from './format.ts';

/** `[image image/png 1.0 MB]`, `[document application/pdf 2.3 MB]`, `[image url]`. */
export function payloadWords(payload: Payload): string {
  const size = payload.bytes === null ? '' : ` ${formatBytes(payload.bytes)}`;
  return `[${payload.kind} ${payload.mediaType ?? payload.source}${size}]`;
}

/** tool_result content as text: text blocks as they are, images and documents in words, other blocks as JSON. */
export function resultContentWords(content: ToolResultContent): string {
  if (typeof content === 'string') return content;
  return content.map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : blockWords(block))).join('\n');
}

/** A block other than text in words: an image or document by its payload (and, for a document of blocks, theirs), anything else as JSON. */
export function blockWords(block: object): string {
  const payload = payloadOf(block);
  if (!payload) return JSON.stringify(block, null, 2) ?? 'undefined';
  const source = (block as { source?: { type?: unknown; content?: unknown } }).source;
  if (source?.type === 'content' && Array.isArray(source.content)) return `${payloadWords(payload)} ${resultContentWords(source.content)}`;
  return payloadWords(payload);
}
