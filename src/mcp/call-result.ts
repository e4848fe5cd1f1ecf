/**
 * An MCP tools/call result as a tool_result for the model: text and images as content blocks,
 * anything else (audio, resources, structured content alone) as JSON text. An error result
 * becomes a throw, so that the ledger records it as is_error like any failed tool.
 */
import type { ContentBlock } from '../../machines/agent-loop.types.ts';
import type { McpCallResult } from './connection.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
import { redactKnownSecrets } from '../util/redact.ts';

/** The server ran the tool and answered with an error result (isError): its words, for the model. */
export class McpToolResultError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'tool';
  override readonly name = 'McpToolResultError';
}

export function contentOfResult(result: McpCallResult): ContentBlock[] | string {
  const blocks = (result.content ?? []).map(blockOf);
  if (result.isError) throw new McpToolResultError(blocks.map((block) => (block.type === 'text' ? block.text : JSON.stringify(block))).join('\n') || 'the tool reported an error');
  if (blocks.length) return blocks;
  if (result.structuredContent !== undefined) return redactKnownSecrets(JSON.stringify(result.structuredContent, null, 2));
  return '(no output)';
}

function blockOf(item: unknown): ContentBlock {
  const block = item as { type?: string; text?: unknown; data?: unknown; mimeType?: unknown };
  if (block?.type === 'text' && typeof block.text === 'string') return { type: 'text', text: redactKnownSecrets(block.text) };
  if (block?.type === 'image' && typeof block.data === 'string' && typeof block.mimeType === 'string') {
    return { type: 'image', source: { type: 'base64', media_type: block.mimeType, data: block.data } };
  }
  return { type: 'text', text: redactKnownSecrets(JSON.stringify(item)) };
}
