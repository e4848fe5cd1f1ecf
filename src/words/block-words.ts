/**
 * A reply's thinking and server tool blocks in words, one line each, for the places a person
 * watches a run (the plain log, the live view) and the visualizer's labels. Pure.
 *
 * Thinking is said collapsed: its length and first words, never its signature. A
 * redacted_thinking block is only named: its data is encrypted. A server tool call is its tool
 * and what it was asked (the query, the URL, the command); its result is what kind of result it
 * is (2 results, exit 0, error: max_uses_exceeded). Only plain fields are said: encrypted
 * content (a search result's page, an encrypted stdout) is named as such, never printed.
 */
import type { ContentBlock } from '../../machines/agent-loop.types.ts';
import { redactSecrets } from '../util/redact.ts';
import { cutTo } from './cut-to.ts';

/** How many characters of a thinking block, a query or a command a line shows. */
const FIRST_WORDS = 60;

/** The result block type of each server tool the API runs, and the tool it belongs to. */
const RESULT_TOOL: Readonly<Record<string, string>> = {
  web_search_tool_result: 'web_search',
  web_fetch_tool_result: 'web_fetch',
  code_execution_tool_result: 'code_execution',
  bash_code_execution_tool_result: 'bash_code_execution',
  text_editor_code_execution_tool_result: 'text_editor_code_execution',
};

export function isThinkingBlock(block: ContentBlock): boolean {
  return block.type === 'thinking' || block.type === 'redacted_thinking';
}

export function isServerToolResult(block: ContentBlock): boolean {
  return block.type in RESULT_TOOL || (block.type.endsWith('_tool_result') && block.type !== 'tool_result' && typeof block.tool_use_id === 'string');
}

/** The server tool a result block is of (web_search for a web_search_tool_result). */
export function resultToolName(block: ContentBlock): string {
  return RESULT_TOOL[block.type] ?? block.type.replace(/_tool_result$/, '');
}

/** `thinking (1,234 characters): Let me look at the notes first…`, or `redacted thinking`. */
export function thinkingWords(block: ContentBlock): string {
  if (block.type === 'redacted_thinking') return 'redacted thinking';
  const [size, first] = thinkingParts(block);
  return first === '' ? `thinking (${size})` : `thinking (${size}): ${first}`;
}

/** `1,234 characters: Let me look at the notes first…` */
function thinkingSize(block: ContentBlock): string {
  const [size, first] = thinkingParts(block);
  return first === '' ? size : `${size}: ${first}`;
}

function thinkingParts(block: ContentBlock): [string, string] {
  const text = typeof block.thinking === 'string' ? block.thinking : '';
  return [characters(text.length), firstWords(oneLine(text))];
}

/** `1 character`, `1,234 characters`. */
export function characters(count: number): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? 'character' : 'characters'}`;
}

/** What a server tool call asks, in a few words: `"latest releases"`, a URL, a command, the start of the code. */
export function serverToolInputWords(name: string, input: unknown): string {
  const fields = input !== null && typeof input === 'object' ? (input as Record<string, unknown>) : {};
  const text = (key: string) => (typeof fields[key] === 'string' ? (fields[key] as string) : null);
  switch (name) {
    case 'web_search':
      return text('query') === null ? compactJson(input) : JSON.stringify(firstWords(oneLine(text('query')!)));
    case 'web_fetch':
      return text('url') ?? compactJson(input);
    case 'code_execution':
      return text('code') === null ? compactJson(input) : firstWords(oneLine(text('code')!));
    case 'bash_code_execution':
      return text('command') === null ? compactJson(input) : firstWords(oneLine(text('command')!));
    case 'text_editor_code_execution':
      return [text('command'), text('path')].filter((word) => word !== null).join(' ') || compactJson(input);
    default:
      return compactJson(input);
  }
}

/** `web_search "latest releases"`: a server_tool_use block's tool and what it asks. */
export function serverToolUseWords(block: ContentBlock): string {
  const name = typeof block.name === 'string' ? block.name : 'server tool';
  return `${name} ${serverToolInputWords(name, block.input)}`;
}

/** What kind of result a server tool's result block is: `2 results`, `fetched https://…`, `exit 0, output: …`, `error: …`. */
export function serverToolResultWords(block: ContentBlock): string {
  const content = block.content;
  if (Array.isArray(content)) {
    // web_search: a list of results (each page's content encrypted: only their count is said).
    const results = content.filter((item) => isObject(item) && item.type !== undefined && !('error_code' in item)).length;
    return results === 0 ? 'no results' : results === 1 ? '1 result' : `${results} results`;
  }
  if (!isObject(content)) return 'a result';
  if (typeof content.error_code === 'string') {
    const message = typeof content.error_message === 'string' && content.error_message !== '' ? ` (${firstWords(oneLine(content.error_message))})` : '';
    return `error: ${content.error_code}${message}`;
  }
  switch (content.type) {
    case 'web_fetch_result':
      return `fetched ${typeof content.url === 'string' ? content.url : 'a page'}`;
    case 'code_execution_result':
    case 'bash_code_execution_result':
    case 'encrypted_code_execution_result':
      return executionWords(content);
    case 'text_editor_code_execution_view_result':
      return typeof content.num_lines === 'number' ? `viewed ${content.num_lines} ${content.num_lines === 1 ? 'line' : 'lines'}` : 'viewed';
    case 'text_editor_code_execution_create_result':
      return content.is_file_update === true ? 'file updated' : 'file created';
    case 'text_editor_code_execution_str_replace_result':
      return 'text replaced';
    default:
      return typeof content.type === 'string' ? content.type.replaceAll('_', ' ') : 'a result';
  }
}

/** `exit 0, output: ran: ls`, `exit 0, output encrypted`, `exit 1, stderr: …`, with the files it made. */
function executionWords(content: Record<string, unknown>): string {
  const parts = [typeof content.return_code === 'number' ? `exit ${content.return_code}` : 'ran'];
  if (typeof content.encrypted_stdout === 'string') parts.push('output encrypted');
  else if (typeof content.stdout === 'string' && content.stdout.trim() !== '') parts.push(`output: ${firstWords(oneLine(content.stdout))}`);
  if (typeof content.stderr === 'string' && content.stderr.trim() !== '') parts.push(`stderr: ${firstWords(oneLine(content.stderr))}`);
  const files = Array.isArray(content.content) ? content.content.length : 0;
  if (files > 0) parts.push(files === 1 ? '1 file' : `${files} files`);
  return parts.join(', ');
}

/**
 * A reply's thinking and server tool blocks, one line each, in the order they came: a call and
 * its result (the API puts it right after the call) on one line; a result whose call was in an
 * earlier reply (a paused turn goes on) by itself, a call whose result comes in the next reply
 * as such. Text and client tool calls have lines of their own elsewhere.
 */
export function replyBlockLines(content: readonly ContentBlock[]): string[] {
  const lines: string[] = [];
  const paired = new Set<number>();
  content.forEach((block, index) => {
    if (isThinkingBlock(block)) {
      lines.push(`[thinking] ${block.type === 'redacted_thinking' ? 'redacted thinking' : thinkingSize(block)}`);
    } else if (block.type === 'server_tool_use') {
      const at = content.findIndex((other, i) => i > index && isServerToolResult(other) && other.tool_use_id === block.id);
      if (at >= 0) paired.add(at);
      const result = at >= 0 ? serverToolResultWords(content[at]!) : 'still running: its result comes in the next reply';
      const name = typeof block.name === 'string' ? block.name : 'server tool';
      lines.push(`[server tool] ${name} ${String(block.id ?? '')} ${serverToolInputWords(name, block.input)} → ${result}`);
    } else if (isServerToolResult(block) && !paired.has(index)) {
      lines.push(`[server tool] ${resultToolName(block)} ${String(block.tool_use_id ?? '')} → ${serverToolResultWords(block)}`);
    }
  });
  return lines.map((line) => redactSecrets(line));
}

/** What a thinking block carries besides its text, in words: `signature: 344 characters, not shown`. */
export function sealedWords(block: ContentBlock): string {
  if (block.type === 'redacted_thinking') return `data: ${characters(String(block.data ?? '').length)}, encrypted, not shown`;
  return `signature: ${characters(String(block.signature ?? '').length)}, not shown`;
}

/**
 * A block with each field that is not plain text to a reader named by its size instead: an
 * encrypted field (encrypted_content, encrypted_stdout, encrypted_index), a signature, a
 * redacted_thinking's data, a base64 payload. Every other field stays as it is.
 */
export function withoutSealed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSealed);
  if (!isObject(value)) return value;
  const base64 = value.type === 'base64' || value.type === 'redacted_thinking';
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => {
      if (typeof inner === 'string' && (key.startsWith('encrypted_') || key === 'signature')) return [key, `[encrypted, ${characters(inner.length)}]`];
      if (typeof inner === 'string' && key === 'data' && base64) return [key, `[${value.type === 'base64' ? 'base64' : 'encrypted'}, ${characters(inner.length)}]`];
      return [key, withoutSealed(inner)];
    }),
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function firstWords(text: string): string {
  return cutTo(text, FIRST_WORDS);
}

function compactJson(value: unknown): string {
  return firstWords(JSON.stringify(value) ?? '');
}
