/**
 * A run's conversation in lines for the terminal (`history --transcript`): one line an entry,
 * cut to the width of the terminal, or with `full` every line of every text and each input as
 * indented JSON. Thinking is one line either way unless full: it is the model's scratch work,
 * long and seldom what a reader looks for.
 */
import type { TranscriptEntry } from '../runtime/run-transcript.ts';
import { isServerToolResult, serverToolResultWords, serverToolUseWords } from './block-words.ts';
import { cutTo } from './cut-to.ts';
import { payloadWords } from './payload-words.ts';
import { needWords } from '../awaits/wait-words.ts';

export interface TranscriptLineOptions {
  /** The terminal's width in characters: each line is cut to it (ignored with full). */
  width: number;
  full: boolean;
}

/** The narrowest a line is cut to, whatever the terminal says: a label and a few words. */
const MIN_WIDTH = 40;
const LABEL_WIDTH = 10;

export function transcriptLines(entries: readonly TranscriptEntry[], options: TranscriptLineOptions): string[] {
  const lines: string[] = [];
  for (const entry of entries) {
    const [label, body] = entryWords(entry, options.full);
    const head = `${label.padEnd(LABEL_WIDTH)} `;
    if (options.full) {
      const [first = '', ...rest] = body.split('\n');
      lines.push(`${head}${first}`.trimEnd());
      for (const line of rest) lines.push(`${' '.repeat(head.length)}${line}`.trimEnd());
    } else {
      lines.push(cutTo(`${head}${oneLine(body)}`, Math.max(MIN_WIDTH, options.width)));
    }
  }
  return lines;
}

/** The label and the text of an entry. */
export function entryWords(entry: TranscriptEntry, full: boolean): [string, string] {
  switch (entry.kind) {
    case 'text':
      return [entry.role, entry.text];
    case 'thinking':
      if (entry.redacted) return ['thinking', '(redacted by the API)'];
      return ['thinking', full ? entry.text : `(${entry.text.length} characters) ${oneLine(entry.text)}`];
    case 'tool-use':
      return ['tool call', `${entry.name} ${entry.id} ${full ? JSON.stringify(entry.input, null, 2) : JSON.stringify(entry.input)}`];
    case 'tool-result': {
      // Each image and document by its media type and size ([image image/png 1.0 MB]), never its bytes.
      const images = entry.payloads.map((payload) => ` ${payloadWords(payload)}`).join('');
      return [entry.isError ? 'error' : 'result', `${entry.name} ${entry.id}: ${entry.text}${images}`];
    }
    case 'open-call':
      return ['open call', `${entry.name} ${entry.id}: ${entry.waitsFor ? `waits for ${needWords(entry.waitsFor)}` : 'no result yet'}`];
    case 'image':
      return [entry.role, payloadWords(entry.payload)];
    case 'compacted':
      return ['compacted', `a summary took the place of the ${entry.replaced} messages above: ${entry.summary}`];
    case 'other':
      // What a server tool asked and what kind of answer it got; never its encrypted content.
      if (entry.type === 'server_tool_use') return ['server tool', `${serverToolUseWords(entry.block)} ${String(entry.block.id ?? '')}`.trimEnd()];
      if (isServerToolResult(entry.block)) return ['server tool', `${String(entry.block.tool_use_id ?? '')} → ${serverToolResultWords(entry.block)}`];
      return [entry.role, `[${entry.type} block]`];
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
