/**
 * An MCP tools/call result as a tool_result for the model: text as text blocks, images as image
 * blocks, an embedded resource with a PDF or an image as a document or image block (all kept
 * once in the journal, src/store/blobs.ts), anything else (resources of text, links, structured
 * content alone) as JSON text. Bytes the Messages API cannot take (audio, an image of a type it
 * does not read, a resource of another kind) are named in a line of text instead, never handed
 * to the model as base64 it would read as text. An error result becomes a throw, so that the
 * ledger records it as is_error like any failed tool.
 */
import type { ContentBlock } from '../../machines/agent-loop.types.ts';
import type { McpCallResult } from './connection.ts';
import { IMAGE_MEDIA_TYPES } from '../tools/sendable.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
import { base64Bytes } from '../util/rich-blocks.ts';
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

interface McpItem {
  type?: string;
  text?: unknown;
  data?: unknown;
  mimeType?: unknown;
  resource?: { uri?: unknown; mimeType?: unknown; blob?: unknown; text?: unknown };
}

function blockOf(item: unknown): ContentBlock {
  const block = item as McpItem | null;
  if (block?.type === 'text' && typeof block.text === 'string') return { type: 'text', text: redactKnownSecrets(block.text) };
  if ((block?.type === 'image' || block?.type === 'audio') && typeof block.data === 'string' && typeof block.mimeType === 'string') {
    return payloadBlock(block.mimeType, block.data, `${block.type} ${block.mimeType}`);
  }
  const resource = block?.type === 'resource' ? block.resource : undefined;
  if (resource && typeof resource.blob === 'string') {
    const uri = typeof resource.uri === 'string' ? redactKnownSecrets(resource.uri) : 'a resource';
    const mimeType = typeof resource.mimeType === 'string' ? resource.mimeType : 'application/octet-stream';
    return payloadBlock(mimeType, resource.blob, `resource ${uri} (${mimeType})`, uri);
  }
  return { type: 'text', text: redactKnownSecrets(JSON.stringify(item)) };
}

/** Bytes as the block the API reads them in, or a line that says what was left out. */
function payloadBlock(mimeType: string, data: string, what: string, title?: string): ContentBlock {
  if (IMAGE_MEDIA_TYPES.includes(mimeType)) return { type: 'image', source: { type: 'base64', media_type: mimeType, data } };
  if (mimeType === 'application/pdf') return { type: 'document', source: { type: 'base64', media_type: mimeType, data }, ...(title ? { title } : {}) };
  return { type: 'text', text: `[${what}, ${base64Bytes(data)} bytes, left out: the Messages API takes images (${IMAGE_MEDIA_TYPES.join(', ')}) and PDF documents only]` };
}
