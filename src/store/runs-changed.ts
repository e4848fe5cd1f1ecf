/**
 * The mark a writer leaves when a run of a folder of runs may no longer rest where a reader saw
 * it end: the folder of runs' own time (ROOT/runs) moves. A reader's index of the folder
 * (runs-index.ts) takes the runs it saw ended without looking at each of them only while that
 * time stays as it was; a run added or removed moves it too, by itself. Ended runs are the many
 * (a folder of ten thousand runs is mostly finished ones), and one leaves its end only when a
 * process writes to it again: a new journal in its folder, a record after its last.
 */
import fs from 'node:fs';
import path from 'node:path';

export const RUNS_DIR = 'runs';

/** Moves the time of the folder of runs a run's folder (ROOT/runs/<id>) is in; nothing for a run outside one. */
export function markRunsChanged(runFolder: string): void {
  const runs = path.dirname(runFolder);
  if (path.basename(runs) !== RUNS_DIR) return;
  try {
    const now = new Date();
    fs.utimesSync(runs, now, now);
  } catch {
    // Not the folder's owner: a name made and taken back moves its time as well.
    const probe = path.join(runs, `.changed-${process.pid}-${Date.now()}`);
    try {
      fs.closeSync(fs.openSync(probe, 'wx'));
      fs.rmSync(probe, { force: true });
    } catch {
      // A folder no one can write in has no writer either.
    }
  }
}
