/**
 * Another commit of this repository, checked out beside it for a bench to load or run: a
 * detached git worktree in a temporary folder, with a node_modules link to this checkout's (so
 * that xstate, pg and tsx resolve to the very same copies on both sides). Removed by `remove()`
 * or, whatever happens first, on the bench's way out (exit-cleanup.ts).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onExit } from './exit-cleanup.ts';

export interface GitTree {
  /** The worktree's folder. */
  dir: string;
  /** The commit checked out, abbreviated. */
  commit: string;
  /** Removes the worktree (once; later calls do nothing). */
  remove: () => void;
}

export class UnknownRevisionError extends Error {
  override readonly name = 'UnknownRevisionError';
  constructor(
    readonly revision: string,
    readonly repo: string,
  ) {
    super(`${revision} names no commit of ${repo}: give a commit, a tag or a branch (git rev-parse ${revision} must succeed there)`);
  }
}

function git(repo: string, args: string[]): string {
  return execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

export function commitOf(repo: string, revision: string): string {
  try {
    return git(repo, ['rev-parse', '--verify', '--quiet', `${revision}^{commit}`]);
  } catch {
    throw new UnknownRevisionError(revision, repo);
  }
}

/** Removes a worktree of `repo` at `dir` (also one half made): the folder, then git's note of it. */
export function removeWorktree(repo: string, dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  git(repo, ['worktree', 'prune']);
}

export function checkoutTree(repo: string, revision: string, prefix = 'da-tree-'): GitTree {
  const full = commitOf(repo, revision);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const remove = onExit(`the worktree ${dir}`, () => removeWorktree(repo, dir));
  try {
    git(repo, ['worktree', 'add', '--detach', dir, full]);
    fs.symlinkSync(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'));
  } catch (error) {
    remove();
    throw error;
  }
  return { dir, commit: full.slice(0, 7), remove };
}

/** The commit checked out at `repo`, abbreviated, with "+changes" when its code has changes not committed. */
export function describeCheckout(repo: string): string {
  const head = git(repo, ['rev-parse', '--short=7', 'HEAD']);
  const dirty = git(repo, ['status', '--porcelain', '--untracked-files=no', '--', 'src', 'machines', 'bench']) !== '';
  return dirty ? `${head}+changes` : head;
}
