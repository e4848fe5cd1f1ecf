/**
 * Pruning the archive of a run directory: DIR/.durable-agent/archive/ holds the runs that
 * `--fresh` or a new run moved aside, as journal-<time>.jsonl with their decisions in
 * decisions-<time>/ (same time). The current run (journal.jsonl beside archive/) is never read
 * nor touched, and an archived run that did not finish (--fresh moves unfinished ones too) is kept.
 *
 * Removal order, so that no half-removed run is ever left in the archive: the journal is
 * renamed to .pruning-journal-<time>.jsonl, then its decisions to .pruning-decisions-<time>
 * (a rename in the same directory: atomic, and allowed without write access to the moved
 * directory), the directory is fsynced, and only then are the renamed pieces deleted. If the
 * decisions cannot be renamed, the journal is renamed back: the run stays whole. If a delete
 * fails, what is left carries the .pruning- name: no run that looks whole but is not; the next
 * prune deletes it (and says so).
 */
import fs from 'node:fs';
import path from 'node:path';
import { FINAL_STATES, type AgentStateName } from '../../machines/agent-loop.types.ts';
import { fileBytes } from '../store/file-store.ts';
import type { FolderRunStore } from '../store/store.ts';
import { readJournal } from '../store/journal/journal-reader.ts';
import { fsyncDir } from '../util/durable-file.ts';
import { pruneFrom } from './prune-flow.ts';
import { checkPruneOptions, type PruneCandidate, type PruneOptions } from './prune-plan.ts';
import { type BlobSweep, pruneBlobs } from './prune-blobs.ts';

const JOURNAL_NAME = /^journal-(.+)\.jsonl$/;
const PRUNING = '.pruning-';

export interface PrunedRun extends PruneCandidate {
  /** The archived journal, as it was named before the prune. */
  journal: string;
  /** Its decisions directory, or null when it had none. */
  decisions: string | null;
}

export interface KeptRun {
  journal: string;
  /** Why it stays: unfinished (its state), or unreadable (what is wrong). */
  why: string;
}

export interface FailedRemoval {
  journal: string;
  message: string;
  /** What is left behind, named .pruning-…, for a person or the next prune to delete. */
  leftover: string[];
}

export interface PruneReport {
  dryRun: boolean;
  /** Removed (or, with dryRun, would be removed), newest first. */
  removed: PrunedRun[];
  /** Bytes removed (or that would be). */
  totalBytes: number;
  /** Archived runs that are not finished or cannot be read: never removed. */
  kept: KeptRun[];
  failed: FailedRemoval[];
  /** Pieces of an earlier, interrupted prune deleted now (or, with dryRun, that would be). */
  leftoversRemoved: string[];
  /** The images and documents of tool results no journal left in the folder refers to (prune-blobs.ts). */
  blobs: BlobSweep;
}

/** Removes the finished archived runs of `store` that the options select (see selectForPruning). */
export async function pruneRuns(store: FolderRunStore, options: PruneOptions): Promise<PruneReport> {
  checkPruneOptions(options);
  const archive = path.join(store.dir, 'archive');
  const dryRun = options.dryRun === true;
  const names = fs.existsSync(archive) ? fs.readdirSync(archive).sort() : [];
  const kept: KeptRun[] = [];
  const candidates: PrunedRun[] = [];
  for (const name of names) {
    const match = JOURNAL_NAME.exec(name);
    if (!match) continue;
    const seen = archivedRun(archive, name, match[1]!);
    if ('why' in seen) kept.push(seen);
    else candidates.push(seen);
  }
  // What an interrupted prune left goes first, before any run is moved aside.
  const leftovers = leftoversOf(names);
  const leftoversRemoved = dryRun ? leftovers : leftovers.filter((name) => removeAll([path.join(archive, name)]).length === 0);
  const outcome = await pruneFrom<PrunedRun, FailedRemoval>(
    {
      candidates: async () => ({ candidates, now: Date.now() }),
      async remove(run) {
        const failure = removeRun(archive, run);
        return failure ? { failed: failure } : 'removed';
      },
    },
    options,
  );
  const blobs = dryRun ? await pruneBlobs(store, true, outcome.removed.map((run) => path.join(archive, run.journal))) : await pruneBlobs(store, false);
  return { dryRun, removed: outcome.removed, totalBytes: outcome.totalBytes, kept, failed: outcome.failed, leftoversRemoved, blobs };
}

/**
 * What an interrupted prune left: its .pruning- pieces, and the decisions of a journal it had
 * moved aside when it was killed before moving them (same time in the name).
 */
function leftoversOf(names: readonly string[]): string[] {
  const aside = names.filter((name) => name.startsWith(PRUNING));
  const orphaned = aside
    .map((name) => /^\.pruning-journal-(.+)\.jsonl$/.exec(name)?.[1])
    .filter((stamp): stamp is string => stamp !== undefined)
    .map((stamp) => `decisions-${stamp}`)
    .filter((name) => names.includes(name));
  return [...aside, ...orphaned];
}

function archivedRun(archive: string, name: string, stamp: string): PrunedRun | KeptRun {
  const file = path.join(archive, name);
  let state: AgentStateName;
  let runId: string;
  let finishedAt: number;
  try {
    const journal = readArchived(file);
    const last = journal.records[journal.records.length - 1]!.record;
    state = last.state;
    runId = journal.header.runId;
    finishedAt = last.at;
  } catch (error) {
    return { journal: name, why: `cannot be read: ${(error as Error).message}` };
  }
  if (!FINAL_STATES.includes(state)) return { journal: name, why: `unfinished (${state})` };
  const decisionsName = `decisions-${stamp}`;
  const decisions = fs.existsSync(path.join(archive, decisionsName)) ? decisionsName : null;
  const bytes = sizeOf(file) + (decisions ? sizeOf(path.join(archive, decisions)) : 0);
  return { id: runId, state, finishedAt, bytes, journal: name, decisions };
}

/** Renames the run's pieces aside (undoing on failure), then deletes them; null when all went. */
function removeRun(archive: string, run: PrunedRun): FailedRemoval | null {
  // A sealed run's wrapped key was archived beside its journal (journal-<time>.run-key.json): it goes with it.
  const runKey = run.journal.replace(/\.jsonl$/, '.run-key.json');
  const pieces = [run.journal, ...(run.decisions ? [run.decisions] : []), ...(fs.existsSync(path.join(archive, runKey)) ? [runKey] : [])];
  const moved: string[] = [];
  try {
    for (const piece of pieces) {
      fs.renameSync(path.join(archive, piece), path.join(archive, PRUNING + piece));
      moved.push(piece);
    }
    fsyncDir(archive);
  } catch (error) {
    const stuck = undoRenames(archive, moved);
    return { journal: run.journal, message: `could not move it aside (${(error as Error).message}); the run stays in the archive as it was`, leftover: stuck };
  }
  const left = removeAll(pieces.map((piece) => path.join(archive, PRUNING + piece)));
  if (left.length === 0) return null;
  return {
    journal: run.journal,
    message: `its pieces were moved aside but could not all be deleted (${left.map((entry) => entry.message).join('; ')})`,
    leftover: left.map((entry) => entry.path),
  };
}

/** Renames back what was moved; returns what could not be (left under its .pruning- name). */
function undoRenames(archive: string, moved: readonly string[]): string[] {
  const stuck: string[] = [];
  for (const piece of [...moved].reverse()) {
    try {
      fs.renameSync(path.join(archive, PRUNING + piece), path.join(archive, piece));
    } catch {
      stuck.push(path.join(archive, PRUNING + piece));
    }
  }
  if (moved.length > 0) fsyncDir(archive);
  return stuck;
}

function removeAll(paths: readonly string[]): Array<{ path: string; message: string }> {
  const left: Array<{ path: string; message: string }> = [];
  for (const target of paths) {
    try {
      fs.rmSync(target, { recursive: true, force: true });
    } catch (error) {
      left.push({ path: target, message: (error as Error).message });
    }
  }
  if (paths.length > 0) fsyncDir(path.dirname(paths[0]!));
  return left;
}

function readArchived(file: string) {
  const fd = fs.openSync(file, 'r');
  try {
    const bytes = fileBytes(fd);
    // An archived journal cut off at its end still tells how the run ended as of its last record.
    return readJournal(file, bytes);
  } finally {
    fs.closeSync(fd);
  }
}

function sizeOf(target: string): number {
  const stat = fs.lstatSync(target);
  if (!stat.isDirectory()) return stat.size;
  return fs.readdirSync(target).reduce((sum, name) => sum + sizeOf(path.join(target, name)), 0);
}
