/** The lesson in English: its transcript's words, the unknown-state text, the demo model's replies (see lesson-words.ts). */
import type { LessonWords } from './lesson-words.ts';

export const EN: LessonWords = {
  resumed: (turn, pending) => `[resume] read turn=${turn} pending=${pending.join(',') || 'none'}`,
  reconcile: {
    reused: 'ledger hit, reusing result, not re-running',
    're-ran-read-only': 'ledger miss, read-only tool, re-running',
    're-ran-idempotent': 'ledger miss, idempotent tool, re-running',
    'unknown-reported': 'ledger miss with side effects, unresolvable, appending is_error',
    'verified-done': 'ledger miss with side effects, verified as done, not re-running',
    'verified-not-done-ran': 'ledger miss with side effects, verified as not done, running it now',
  },
  saveBAfterResume: (turn, results) => `[turn ${turn}][save B] filled in ${results > 1 ? "this turn's tool results" : "this turn's tool result"} after resume`,
  kill: (label) => `[kill] simulated kill at ${label}`,
  unknownState: (name, id, why) =>
    `The state of this ${name} call (tool_use_id ${id}) from before the process was resumed is unknown: ${why}. ` +
    'It was not run again, so as not to repeat its side effect. Check whether it took effect before calling it again.',
  unknownWhy: {
    noRecord: 'no result was recorded for it',
    toolGone: (name) => `the tool ${name} is not available in this process`,
    toolChanged: (name, change) => `the tool ${name} changed since this call was made (${change}), so it was not called again with a different contract`,
    cannotTell: (what) => `${what}, and no result was recorded for it`,
  },
  verifiedDone: (name) => `${name} had already taken effect before the resume (confirmed by checking); it was not run again.`,
  demo: {
    done: 'Report written to report.txt, task complete.',
    notConfirmed: (file, result) => `I could not confirm that ${file} was written (${result}). Please check ${file} before running the task again.`,
    notWritten: (file, result) => `I did not write ${file}: ${result}.`,
    followUp: (file, said) => `You said: ${said}. ${file} is written; this scripted model has nothing to add.`,
  },
};
