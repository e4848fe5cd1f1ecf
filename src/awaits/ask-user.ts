/**
 * The ask_user tool (allowQuestions): the model asks a person a question and the answer is the
 * call's result. Its calls are flagged as needing an answer when the reply arrives, so the
 * driver waits for that answer and never runs it; run() only guards against a run that offers
 * the tool without flagging its calls.
 */
import type { ToolDefinition } from '../tools/tool.ts';

export const ASK_USER = 'ask_user';

export const askUserTool: ToolDefinition<{ question: string }> = {
  name: ASK_USER,
  description:
    'Ask the person you work for a question and wait for their answer (it may take minutes or days). ' +
    'Use it when you cannot go on well without their input; the answer is the result.',
  inputSchema: {
    type: 'object',
    properties: { question: { type: 'string', minLength: 1, description: 'The question, complete enough to answer without context.' } },
    required: ['question'],
    additionalProperties: false,
  },
  readOnly: true,
  run() {
    throw new Error('ask_user is answered by a person, not run; this run did not wait for the answer (allowQuestions is off)');
  },
};

/** The question of an ask_user call, for prompts and lines that show it. */
export function questionOf(input: unknown): string | null {
  const question = input !== null && typeof input === 'object' ? (input as { question?: unknown }).question : undefined;
  return typeof question === 'string' ? question : null;
}
