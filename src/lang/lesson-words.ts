/**
 * The words of the lesson in one language: the transcript lines that carry words (the resume,
 * the reconcile decisions, checkpoint B after a resume, the kill), the text a resumed run gives
 * the model for a call whose state is unknown, and what the demo's scripted model says. One
 * table per language (en.ts, pt.ts) with the same keys; the lines that are only tags and
 * numbers (`[turn 1][save A] pending=read_notes`) are the same in every language and live with
 * the other run lines. Nothing here is written to the journal: the words are chosen when they
 * are said, so a run started in one language reads in another.
 */
import type { ReconcileOutcomeName } from '../store/journal/journal-record.ts';

export interface LessonWords {
  /** `[resume] read turn=3 pending=write_report`: where a resume found the run (no open call: none). */
  resumed(turn: number, pending: readonly string[]): string;
  /** The reconcile line's phrase for each way a resume settles an open call. */
  reconcile: Readonly<Record<ReconcileOutcomeName, string>>;
  /** `[turn 3][save B] filled in this turn's tool result after resume`: the checkpoint B that closes the turn a resume found open. */
  saveBAfterResume(turn: number, results: number): string;
  /** `[kill] simulated kill at after-effect-write:3`: an armed crash point ends the process. */
  kill(label: string): string;
  /** The error result the model reads for a call whose effect may or may not have happened: it was not run again. */
  unknownState(name: string, id: string, why: string): string;
  /** Why a call's state is unknown, said inside unknownState. */
  unknownWhy: {
    /** A side effect with no ledger entry and no verify. */
    noRecord: string;
    /** The tool is not among this process's tools. */
    toolGone(name: string): string;
    /** The tool's contract changed since the call was made (allowed by the user). */
    toolChanged(name: string, change: string): string;
    /** The tool's verify could not say (it failed, or took too long). */
    cannotTell(what: string): string;
  };
  /** The result the model reads for a call a verify found done, when the verify gives none of its own. */
  verifiedDone(name: string): string;
  /** What the demo's scripted model says when the task ends. */
  demo: {
    /** The report is written. */
    done: string;
    /** write_report's state is unknown: the model says it could not confirm it. */
    notConfirmed(file: string, result: string): string;
    /** A person denied write_report. */
    notWritten(file: string, result: string): string;
    /** A message that continues the finished demo (`demo --resume --message`). */
    followUp(file: string, said: string): string;
  };
}
