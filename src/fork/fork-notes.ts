/**
 * Where a file run's forks are noted: one line per fork in DIR/.durable-agent/forks.jsonl, beside
 * the parent's journal, never in it (the parent's journal is not changed by a fork). Only for
 * showing lineage: a child names its parent in its own header whatever happens to this file,
 * and a line lost (a crash right after the child was written) only hides that child here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { appendDurably } from '../util/durable-file.ts';

export const FORKS_FILE = 'forks.jsonl';

export interface ForkNote {
  /** The parent's run id (the directory may hold another run later: its notes are told apart by this). */
  parent: string;
  /** The parent's record the child was forked at. */
  seq: number;
  child: { runId: string; location: string };
  at: number;
}

export function appendForkNote(stateDir: string, note: ForkNote): void {
  appendDurably(path.join(stateDir, FORKS_FILE), `${JSON.stringify(note)}\n`);
}

/** The forks noted for this run, oldest first; a line that cannot be read (cut off by a crash) is left out. */
export function readForkNotes(stateDir: string, parentRunId: string): ForkNote[] {
  let text: string;
  try {
    text = fs.readFileSync(path.join(stateDir, FORKS_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const notes: ForkNote[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const note = JSON.parse(line) as ForkNote;
      if (note?.parent === parentRunId && typeof note.seq === 'number' && typeof note.child?.location === 'string') notes.push(note);
    } catch {
      // a line cut off by a crash: that fork still names its parent in its own header
    }
  }
  return notes;
}
