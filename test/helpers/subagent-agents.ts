/**
 * The agents of the sub-agent tests: an editor whose one reply calls a writer sub-agent twice,
 * and the writer, which writes one note file under its call's idempotency key (an audit line per
 * write, so a test can tell each was written once) and then answers. Scripted models: no network.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Budget, defineAgent, defineTool, type ToolDefinition } from '../../src/index.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/testing.ts';
import type { Message } from '../../machines/agent-loop.types.ts';

export const taskOf = (messages: readonly Message[]) => (typeof messages[0]!.content === 'string' ? messages[0]!.content : JSON.stringify(messages[0]!.content));

export interface WriterOptions {
  /** How long the note tool takes. */
  slowMs?: number;
  /** The note tool needs a person's approval. */
  approval?: boolean;
  budget?: Budget;
  /** Told when a write starts and ends (to see writes side by side). */
  onWrite?: (phase: 'start' | 'end') => void;
  /** Every writer's call has the id toolu_w (a scripted model may repeat ids; the API never does). */
  sameCallId?: boolean;
  /** Told each note's text as its write starts; the write waits for the promise it gives, if any. */
  beforeWrite?: (text: string) => Promise<void> | undefined;
}

/** The writer: one write_note call (its id names the note, so two writers' calls differ), then its answer. */
export function writerAgent(dir: string, options: WriterOptions = {}) {
  const writeNote = defineTool<{ text: string }>({
    name: 'write_note',
    description: 'Write a note.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    readOnly: false,
    run: async ({ text }, ctx) => {
      options.onWrite?.('start');
      await options.beforeWrite?.(text);
      // A cancel of its run (ctx.signal) ends the wait: the call fails and writes nothing.
      if (options.slowMs) await slow(options.slowMs, ctx.signal);
      fs.appendFileSync(path.join(dir, 'audit.log'), `${ctx.idempotencyKey}\n`);
      fs.writeFileSync(path.join(dir, ctx.idempotencyKey), text);
      options.onWrite?.('end');
      return 'written';
    },
    verify: (_input, ctx) => ({ happened: fs.existsSync(path.join(dir, ctx.idempotencyKey)) }),
  });
  return defineAgent({
    name: 'writer',
    model: scriptedModel(
      [
        (messages) => toolUseReply([{ id: options.sameCallId ? 'toolu_w' : `toolu_w_${taskOf(messages).replace(/[^A-Za-z0-9]/g, '')}`, name: 'write_note', input: { text: taskOf(messages) } }]),
        (messages) => endTurnReply(`wrote "${taskOf(messages)}"`),
      ],
      { name: 'scripted-writer' },
    ),
    tools: [writeNote],
    ...(options.approval ? { requireApproval: ['write_note'] } : {}),
    ...(options.budget ? { budget: options.budget } : {}),
  });
}

/** The editor: one reply with two calls of the writer (notes A and B), then an answer quoting both results. */
export function editorAgent(tools: ToolDefinition[], options: { budget?: Budget } = {}) {
  return defineAgent({
    name: 'editor',
    model: scriptedModel(
      [
        toolUseReply([
          { id: 'toolu_a', name: 'writer', input: { task: 'note A' } },
          { id: 'toolu_b', name: 'writer', input: { task: 'note B' } },
        ]),
        (messages) => {
          const results = messages.flatMap((message) => (typeof message.content === 'string' ? [] : message.content.filter((block) => block.type === 'tool_result')));
          return endTurnReply(`done: ${results.map((block) => JSON.stringify(block.content)).join(' / ')}`);
        },
      ],
      { name: 'scripted-editor' },
    ),
    tools,
    ...(options.budget ? { budget: options.budget } : {}),
  });
}

/** The audit lines: one per note written. */
export function auditOf(dir: string): string[] {
  const file = path.join(dir, 'audit.log');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

function slow(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(new Error('cancelled while writing'))), { once: true });
  });
}
