/**
 * A run's conversation as a person reads it: the task, the model's text and thinking, each tool
 * call with its input and its result, in order. Read from the store alone (no lock, nothing
 * changed), like status and history. The whole conversation is kept even where compaction
 * replaced older turns with a summary in the run's context: the turns it replaced come first,
 * then the summary, said as such.
 */
import type { AgentContext, ContentBlock, DecisionNeed, Message, ToolResultContent } from '../../machines/agent-loop.types.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import { type LoadedRun, requireContent } from '../store/store.ts';
import type { RunStore } from '../store/store.ts';
import { type Payload, payloadOf, payloadsIn } from '../util/rich-blocks.ts';

export type TranscriptEntry =
  | { kind: 'text'; role: 'user' | 'assistant'; text: string }
  | { kind: 'thinking'; text: string; redacted: boolean }
  | { kind: 'tool-use'; id: string; name: string; input: unknown }
  | { kind: 'tool-result'; id: string; name: string; text: string; isError: boolean; images: number; payloads: Payload[] }
  /** A call of the open turn with no result in the conversation yet: waiting for a person, or not yet run. */
  | { kind: 'open-call'; id: string; name: string; waitsFor: DecisionNeed | null }
  | { kind: 'image'; role: 'user' | 'assistant'; mediaType: string; payload: Payload }
  /** Compaction: a summary took the place of this many older messages (they are shown above it). */
  | { kind: 'compacted'; replaced: number; summary: string }
  /** A block the loop passes through without reading (server tools, citations…): named by its type. */
  /** A block of another kind (a server tool's call or result…), kept whole for the words that show it. */
  | { kind: 'other'; role: 'user' | 'assistant'; type: string; block: ContentBlock };

export interface RunTranscript {
  runId: string;
  task: string;
  entries: TranscriptEntry[];
}

export async function readRunTranscript(store: RunStore): Promise<RunTranscript> {
  return transcriptOf(store.location, requireContent(await store.load()));
}

/** The conversation of a loaded journal (read from its first record: a load from the last snapshot would lack the turns before it). */
export function transcriptOf(location: string, loaded: LoadedRun): RunTranscript {
  const kept = new KeptMessages();
  const view = foldJournal(location, loaded, (step, stored) => kept.follow(step.context, stored.record.event, stored.record.messages?.from));
  return { runId: loaded.header.runId, task: view.context.task, entries: entriesOf(kept.items, view.context) };
}

type KeptItem = { message: Message } | { compacted: number; summary: Message };

/**
 * The messages of every record, kept past a compaction. The context's messages are edited in
 * place (a record says from which index it rewrites them), so each record's edit is copied into
 * `items` at the same place, after the messages a compaction took out of the context.
 */
class KeptMessages {
  readonly items: KeptItem[] = [];
  /** Where the context's message 0 is in `items`. */
  private base = 0;
  private length = 0;

  follow(context: AgentContext, event: string, from: number | undefined): void {
    const messages = context.messages;
    if (event === 'COMPACTED' && messages.length > 0) {
      // The summary is message 0; the messages it replaced stay in `items`, before it.
      const replaced = this.length - (messages.length - 1);
      this.base += replaced;
      this.items.length = this.base;
      this.items.push({ compacted: replaced, summary: messages[0]! });
      for (const message of messages.slice(1)) this.items.push({ message });
    } else if (from !== undefined || messages.length !== this.length) {
      let at = Math.min(from ?? this.length, this.length, messages.length);
      // A snapshot rewrites the context from message 0, the summary of a compaction among them: it stays said as one.
      if (at === 0 && this.items[this.base] && 'compacted' in this.items[this.base]!) at = 1;
      this.items.length = this.base + at;
      for (const message of messages.slice(at)) this.items.push({ message });
    }
    this.length = messages.length;
  }
}

function entriesOf(items: readonly KeptItem[], context: AgentContext): TranscriptEntry[] {
  const names = new Map<string, string>();
  const answered = new Set<string>();
  const entries: TranscriptEntry[] = [];
  for (const item of items) {
    if ('compacted' in item) {
      entries.push({ kind: 'compacted', replaced: item.compacted, summary: contentText(item.summary.content) });
      continue;
    }
    const { role, content } = item.message;
    if (typeof content === 'string') {
      entries.push({ kind: 'text', role, text: content });
      continue;
    }
    for (const block of content) {
      const entry = blockEntry(role, block, names);
      if (entry.kind === 'tool-use') names.set(entry.id, entry.name);
      if (entry.kind === 'tool-result') answered.add(entry.id);
      entries.push(entry);
    }
  }
  // The open turn: its recorded results are in `results` until the turn closes; the rest wait.
  for (const call of context.pending) {
    if (answered.has(call.id)) continue;
    const outcome = context.results.find((result) => result.tool_use_id === call.id);
    if (outcome) {
      entries.push({ kind: 'tool-result', id: call.id, name: call.name, text: resultText(outcome.content), isError: outcome.is_error, images: imageCount(outcome.content), payloads: payloadsIn(outcome.content) });
    } else {
      entries.push({ kind: 'open-call', id: call.id, name: call.name, waitsFor: call.needs && !context.decisions.some((d) => d.tool_use_id === call.id) ? call.needs : null });
    }
  }
  return entries;
}

function blockEntry(role: 'user' | 'assistant', block: ContentBlock, names: ReadonlyMap<string, string>): TranscriptEntry {
  switch (block.type) {
    case 'text':
      return { kind: 'text', role, text: String(block.text ?? '') };
    case 'thinking':
      return { kind: 'thinking', text: String(block.thinking ?? ''), redacted: false };
    case 'redacted_thinking':
      return { kind: 'thinking', text: '', redacted: true };
    case 'tool_use':
      return { kind: 'tool-use', id: String(block.id), name: String(block.name), input: block.input };
    case 'tool_result': {
      const id = String(block.tool_use_id);
      const content = block.content as ToolResultContent | undefined;
      return { kind: 'tool-result', id, name: names.get(id) ?? '?', text: resultText(content ?? ''), isError: block.is_error === true, images: imageCount(content ?? ''), payloads: payloadsIn(content) };
    }
    case 'image':
      return { kind: 'image', role, mediaType: mediaTypeOf(block), payload: payloadOf(block)! };
    default:
      return { kind: 'other', role, type: block.type, block };
  }
}

function resultText(content: ToolResultContent): string {
  return typeof content === 'string' ? content : content.filter((block) => block.type === 'text').map((block) => String(block.text ?? '')).join('\n');
}

function imageCount(content: ToolResultContent): number {
  return typeof content === 'string' ? 0 : content.filter((block) => block.type === 'image').length;
}

function contentText(content: Message['content']): string {
  return typeof content === 'string' ? content : content.filter((block) => block.type === 'text').map((block) => String(block.text ?? '')).join('\n');
}

function mediaTypeOf(block: ContentBlock): string {
  const source = block.source as { media_type?: unknown } | undefined;
  return typeof source?.media_type === 'string' ? source.media_type : 'image';
}
