/** The lesson's task, its sample notes and the scripted model that plays it without a key. */
import fs from 'node:fs';
import path from 'node:path';
import type { ContentBlock, Message, ModelReply, ToolResultBlock } from '../../machines/agent-loop.types.ts';
import { EN } from '../lang/en.ts';
import type { LessonWords } from '../lang/lesson-words.ts';
import { endTurnReply, type ScriptedStep, toolUseReply } from '../model/scripted-model.ts';
import { inEnvironment } from '../store/fs-problems.ts';
import type { WriteFaultPlan } from '../store/write-faults.ts';
import { NOTES_FILE, REPORT_FILE, wordCount } from './demo-tools.ts';

export const DEMO_TASK = 'Turn sales-notes.txt into a short report and write it to report.txt.';

/** What the scripted model says when the task ends, in the lesson's language (lesson-words.ts). */
export type DemoWords = LessonWords['demo'];

export const SAMPLE_NOTES = `Q3 sales notes
- North region closed 14 new accounts; revenue up 12% on Q2.
- South region flat: two large renewals slipped to October.
- Enterprise pipeline: 3 deals above $100k in final negotiation.
- Churn fell to 2.1% after the onboarding changes in July.
- Action: hire one more account manager for the North region.
`;

/**
 * Creates the sample notes when the directory has none; never overwrites the user's. The notes
 * are written whole beside their place and linked in: a full disk leaves no cut-off notes that
 * the next run would take for the user's. `faults` arms `notes-write` (DURABLE_AGENT_FAIL_WRITE).
 */
export function ensureSampleNotes(dir: string, faults?: WriteFaultPlan): boolean {
  const file = path.join(dir, NOTES_FILE);
  if (fs.existsSync(file)) return false;
  return inEnvironment(`write the sample notes ${file}`, file, () => {
    fs.mkdirSync(dir, { recursive: true });
    const tmp = `${file}.new-${process.pid}`;
    try {
      const fault = faults?.checkPoint('notes-write');
      if (fault) {
        fs.writeFileSync(tmp, SAMPLE_NOTES.slice(0, SAMPLE_NOTES.length >> 1));
        throw fault;
      }
      fs.writeFileSync(tmp, SAMPLE_NOTES);
      fs.linkSync(tmp, file);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false; // the user's notes appeared meanwhile: theirs stay
      throw error;
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  });
}

/** Four replies: read the notes, count their words, write the report, say it is done (its last words in `words`). */
export function demoScript(words: DemoWords = EN.demo): ScriptedStep[] {
  return [
    () => toolUseReply([{ id: 'toolu_01', name: 'read_notes', input: {} }], `I'll read ${NOTES_FILE} first.`),
    (messages) =>
      toolUseReply(
        [{ id: 'toolu_02', name: 'count_words', input: { text: resultText(messages, 'toolu_01') } }],
        'Counting the words in the notes.',
      ),
    (messages) =>
      toolUseReply(
        [{ id: 'toolu_03', name: 'write_report', input: { content: buildReport(resultText(messages, 'toolu_01'), resultText(messages, 'toolu_02')) } }],
        `Writing the report to ${REPORT_FILE}.`,
      ),
    (messages) => {
      const written = resultBlock(messages, 'toolu_03');
      const denial = /^denied by a person: /.test(resultText(messages, 'toolu_03'));
      if (written?.is_error && denial) return endTurnReply(words.notWritten(REPORT_FILE, resultText(messages, 'toolu_03')));
      if (written?.is_error) return endTurnReply(words.notConfirmed(REPORT_FILE, resultText(messages, 'toolu_03')));
      return endTurnReply(words.done);
    },
  ];
}

/** The scripted model's answer to a message that continues the finished demo (`demo --resume --message`). */
export function demoFollowUp(words: DemoWords = EN.demo): (messages: readonly Message[]) => ModelReply {
  return (messages) => {
    const last = messages[messages.length - 1];
    const asked = last?.role === 'user' && typeof last.content === 'string' ? last.content : '';
    return endTurnReply(words.followUp(REPORT_FILE, JSON.stringify(asked)));
  };
}

export function buildReport(notes: string, countText: string): string {
  const lines = notes.split('\n').map((line) => line.trim()).filter(Boolean);
  const title = lines[0] ?? 'Sales notes';
  const points = lines.slice(1).map((line) => `- ${line.replace(/^[-*]\s*/, '')}`);
  const words = Number.parseInt(countText, 10);
  return [
    `Sales report: ${title}`,
    '',
    `Source: ${NOTES_FILE} (${Number.isNaN(words) ? wordCount(notes) : words} words)`,
    '',
    'Highlights:',
    ...points,
    '',
  ].join('\n');
}

function resultBlock(messages: readonly Message[], toolUseId: string): ToolResultBlock | undefined {
  for (const message of messages) {
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    const block = message.content.find((b: ContentBlock) => b.type === 'tool_result' && b.tool_use_id === toolUseId);
    if (block) return block as ToolResultBlock;
  }
  return undefined;
}

function resultText(messages: readonly Message[], toolUseId: string): string {
  const block = resultBlock(messages, toolUseId);
  if (!block) return '';
  if (typeof block.content === 'string') return block.content;
  return block.content.map((b) => (typeof b.text === 'string' ? b.text : '')).join('');
}
