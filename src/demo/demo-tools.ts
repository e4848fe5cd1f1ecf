/**
 * The lesson's three tools. write_report is the side effect: it writes report.txt atomically
 * and appends one audit line per real execution to report-audit.log, so a second write of the
 * same call would be plain to see.
 */
import fs from 'node:fs';
import path from 'node:path';
import { defineTool, type ToolDefinition } from '../tools/tool.ts';
import { appendDurably, writeFileDurably } from '../util/durable-file.ts';
import { type Pace, stepDelay } from '../util/pace.ts';

export const NOTES_FILE = 'sales-notes.txt';
export const REPORT_FILE = 'report.txt';
export const AUDIT_FILE = 'report-audit.log';

export interface DemoToolOptions extends Pace {
  /** Let write_report check report.txt on resume (default). Off: the lesson's plain "unknown state" branch. */
  verify?: boolean;
}

export function demoTools(dir: string, options: DemoToolOptions = {}): ToolDefinition[] {
  // A cancel or pause aborts a step's delay (ctx.signal): the tool stops before its effect.
  const pace = (signal?: AbortSignal) => stepDelay(options, signal);
  const readNotes = defineTool<Record<string, never>>({
    name: 'read_notes',
    description: `Read the sales notes (${NOTES_FILE}) and return their text.`,
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    readOnly: true,
    async run(_input, context) {
      await pace(context.signal);
      return fs.readFileSync(path.join(dir, NOTES_FILE), 'utf8');
    },
  });
  const countWords = defineTool<{ text: string }>({
    name: 'count_words',
    description: 'Count the words in a text.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    readOnly: true,
    async run({ text }, context) {
      await pace(context.signal);
      return `${wordCount(text)} words`;
    },
  });
  const writeReport = defineTool<{ content: string }>({
    name: 'write_report',
    description: `Write the finished report to ${REPORT_FILE}, replacing what is there.`,
    inputSchema: {
      type: 'object',
      properties: { content: { type: 'string', minLength: 1 } },
      required: ['content'],
      additionalProperties: false,
    },
    readOnly: false,
    async run({ content }, context) {
      await pace(context.signal);
      writeFileDurably(path.join(dir, REPORT_FILE), content);
      const audit = `${new Date().toISOString()} tool_use_id=${context.toolUseId} idempotency_key=${context.idempotencyKey} bytes=${Buffer.byteLength(content)}\n`;
      appendDurably(path.join(dir, AUDIT_FILE), audit);
      return `Wrote ${Buffer.byteLength(content)} bytes to ${REPORT_FILE}.`;
    },
    ...(options.verify === false
      ? {}
      : {
          async verify({ content }: { content: string }) {
            let current: string;
            try {
              current = fs.readFileSync(path.join(dir, REPORT_FILE), 'utf8');
            } catch {
              return { happened: false };
            }
            if (current !== content) return { happened: false };
            return {
              happened: true,
              result: `${REPORT_FILE} already holds this report (${Buffer.byteLength(content)} bytes): it was written before the resume, and was not written again.`,
            };
          },
        }),
  });
  return [readNotes, countWords, writeReport];
}

export function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}
