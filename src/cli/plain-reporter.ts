/**
 * The plain log: the lesson's lines on stdout, everything else on stderr (alerts always,
 * details with --verbose). The lines are the shared ones of src/words/; here only the writers.
 */
import type { RunObserver } from '../core/run-events.ts';
import { EN } from '../lang/en.ts';
import type { LessonWords } from '../lang/lesson-words.ts';
import type { DecisionCommands } from '../words/decision-lines.ts';
import { commandLines, detailLine, plainLine, replyLines, type Writers } from '../words/run-lines.ts';
import { streamLineWriter } from './stream-lines.ts';

export type { Writers } from '../words/run-lines.ts';

/** `words`: the language of the lesson's lines. */
export function plainReporter(writers: Writers, verbose: boolean, commands: DecisionCommands | null = null, words: LessonWords = EN): RunObserver {
  const streamed = verbose ? streamLineWriter((line) => writers.err(line)) : null;
  return (event) => {
    streamed?.(event);
    const line = plainLine(event, words);
    if (line !== null) writers.out(line);
    for (const block of replyLines(event)) writers.out(block);
    for (const hint of commandLines(event, commands)) writers.out(hint);
    const detail = detailLine(event, verbose);
    if (detail !== null) writers.err(detail);
  };
}
