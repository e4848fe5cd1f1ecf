/**
 * What a path given to a file tool really names, decided at the moment of use rather than from
 * its text. Every directory on the way is looked at (lstat); a symbolic link is followed only when
 * what it leads to stays inside the working directory and out of its state; the last component is
 * opened with O_NOFOLLOW; and the opened descriptor's own path (/proc/self/fd on Linux) is checked
 * once more, so that a link swapped in between the check and the open is caught. Nothing here
 * blocks the event loop: a FIFO or a device is refused, never read.
 */
import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { NotADirectoryError, NotAFileError, PathChangedError, PathNotFoundError, PathOutsideError, STATE_DIR } from './path-errors.ts';

const { O_RDONLY, O_NONBLOCK, O_NOFOLLOW } = fs.constants;

/** Where a symbolic link leads, judged against the working directory. */
export type LinkTarget =
  | { kind: 'inside'; real: string; stat: fs.Stats }
  | { kind: 'outside' }
  | { kind: 'state' }
  | { kind: 'dangling' };

export class WorkingDirectory {
  /** The directory as the user spelled it (made absolute). */
  readonly given: string;
  private real: string | null = null;

  constructor(dir: string) {
    this.given = path.resolve(dir);
  }

  /**
   * The real path of the directory, resolved once (the run creates it before the first tool
   * call): a directory reached through a symlink, like /tmp on some systems, still works.
   */
  async root(): Promise<string> {
    this.real ??= await fs.promises.realpath(this.given);
    return this.real;
  }

  /**
   * The components of a requested path below the directory, from its text: ".." is resolved
   * textually and may not climb out. An absolute path is accepted in either spelling of the
   * directory.
   */
  components(root: string, requested: string): string[] {
    for (const base of [this.given, root]) {
      const relative = path.relative(base, path.resolve(base, requested));
      if (!escapes(relative)) return relative === '' ? [] : relative.split(path.sep);
    }
    throw new PathOutsideError(requested);
  }

  /** Refuses a real path that is outside the root or in its state. */
  ensureInside(root: string, real: string, requested: string, symlink: string | null): void {
    const where = placeOf(root, real);
    if (where !== 'inside') throw new PathOutsideError(requested, symlink, where === 'state');
  }

  /** Where a symbolic link leads, fully resolved now. */
  async linkTarget(root: string, link: string): Promise<LinkTarget> {
    let real: string;
    try {
      real = await fs.promises.realpath(link);
    } catch (error) {
      if (codeOf(error) === 'ENOENT' || codeOf(error) === 'ELOOP') return { kind: 'dangling' };
      throw error;
    }
    const where = placeOf(root, real);
    if (where !== 'inside') return { kind: where };
    return { kind: 'inside', real, stat: await fs.promises.stat(real) };
  }

  /**
   * The real directory that `parts` names, each step checked as it is taken. With `create`,
   * a missing directory is made, always inside a directory already checked: never through a
   * symlink that leaves.
   */
  async directory(root: string, parts: readonly string[], requested: string, create: boolean): Promise<string> {
    let current = root;
    for (const [index, part] of parts.entries()) {
      const shown = parts.slice(0, index + 1).join('/');
      const next = path.join(current, part);
      this.ensureInside(root, next, requested, null);
      let stat = await lstatOrNull(next);
      if (!stat && create) {
        await fs.promises.mkdir(next).catch((error: unknown) => {
          if (codeOf(error) !== 'EEXIST') throw error;
        });
        stat = await lstatOrNull(next);
      }
      if (!stat) throw new PathNotFoundError(requested, shown);
      current = next;
      if (stat.isSymbolicLink()) {
        const target = await this.linkTarget(root, next);
        if (target.kind === 'dangling') throw new PathNotFoundError(requested, shown);
        if (target.kind !== 'inside') throw new PathOutsideError(requested, shown, target.kind === 'state');
        current = target.real;
        stat = target.stat;
      }
      if (!stat.isDirectory()) throw new NotADirectoryError(requested, shown);
    }
    return current;
  }

  /**
   * Opens a regular file for reading without ever blocking and without leaving the directory;
   * the caller closes the handle. `size` is the file's size as fstat tells it.
   */
  async openForReading(requested: string): Promise<{ handle: FileHandle; size: number }> {
    const root = await this.root();
    const parts = this.components(root, requested);
    if (parts.length === 0) throw new NotAFileError(requested, 'directory');
    const parent = await this.directory(root, parts.slice(0, -1), requested, false);
    let target = path.join(parent, parts[parts.length - 1]!);
    this.ensureInside(root, target, requested, null);
    const stat = await lstatOrNull(target);
    if (!stat) throw new PathNotFoundError(requested, requested);
    if (stat.isSymbolicLink()) {
      const link = await this.linkTarget(root, target);
      if (link.kind === 'dangling') throw new PathNotFoundError(requested, requested);
      if (link.kind !== 'inside') throw new PathOutsideError(requested, parts.join('/'), link.kind === 'state');
      if (!link.stat.isFile()) throw new NotAFileError(requested, kindOf(link.stat));
      target = link.real;
    } else if (!stat.isFile()) {
      // Not even opened: opening a FIFO or a device can wait or act.
      throw new NotAFileError(requested, kindOf(stat));
    }
    const handle = await openNoFollow(target, requested);
    try {
      await this.ensureOpenedInside(root, handle, target, requested);
      const opened = await handle.stat();
      if (!opened.isFile()) throw new NotAFileError(requested, kindOf(opened));
      return { handle, size: opened.size };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /**
   * Where a file may be written: its real directory (missing ones created) and its name. A
   * directory (or FIFO, socket, device) at the name is refused before anything is created. A
   * symlink at the name is fine: the write's rename replaces it instead of writing through it.
   */
  async placeForWriting(requested: string): Promise<{ root: string; directory: string; name: string }> {
    const root = await this.root();
    const parts = this.components(root, requested);
    if (parts.length === 0) throw new NotAFileError(requested, 'directory');
    const name = parts[parts.length - 1]!;
    this.ensureInside(root, path.join(root, ...parts), requested, null);
    const existingParent = await this.directory(root, parts.slice(0, -1), requested, false).catch((error: unknown) => {
      if (error instanceof PathNotFoundError) return null;
      throw error;
    });
    const existing = existingParent === null ? null : await lstatOrNull(path.join(existingParent, name));
    if (existing && !existing.isFile() && !existing.isSymbolicLink()) throw new NotAFileError(requested, kindOf(existing));
    const directory = existingParent ?? (await this.directory(root, parts.slice(0, -1), requested, true));
    return { root, directory, name };
  }

  /**
   * The descriptor's real path must be inside too. /proc/self/fd names what was opened, however
   * the path changed meanwhile; without /proc, the path must still lead, inside, to that file.
   */
  async ensureOpenedInside(root: string, handle: FileHandle, openedPath: string, requested: string): Promise<void> {
    const real = await fs.promises.readlink(`/proc/self/fd/${handle.fd}`).catch(() => null);
    if (real !== null && path.isAbsolute(real)) {
      this.ensureInside(root, real.replace(/ \(deleted\)$/, ''), requested, null);
      return;
    }
    const now = await fs.promises.realpath(openedPath).catch(() => null);
    if (now === null) throw new PathChangedError(requested);
    this.ensureInside(root, now, requested, null);
    const [opened, named] = await Promise.all([handle.stat(), fs.promises.stat(now)]);
    if (opened.dev !== named.dev || opened.ino !== named.ino) throw new PathChangedError(requested);
  }
}

/** Reads at most `limit` bytes from the start of the file: a huge file costs only what is returned. */
export async function readAtMost(handle: FileHandle, limit: number): Promise<Buffer> {
  const buffer = Buffer.alloc(limit);
  let filled = 0;
  while (filled < limit) {
    const { bytesRead } = await handle.read(buffer, filled, limit - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

export function kindOf(stat: fs.Stats): string {
  if (stat.isDirectory()) return 'directory';
  if (stat.isFIFO()) return 'FIFO';
  if (stat.isSocket()) return 'socket';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'device';
  if (stat.isSymbolicLink()) return 'symbolic link';
  return 'special file';
}

function placeOf(root: string, real: string): 'inside' | 'outside' | 'state' {
  const relative = path.relative(root, real);
  if (escapes(relative)) return 'outside';
  // Lower-cased: on a case-insensitive file system ".Durable-Agent" is the state too.
  return relative.split(path.sep)[0]!.toLowerCase() === STATE_DIR ? 'state' : 'inside';
}

function escapes(relative: string): boolean {
  return relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
}

async function openNoFollow(file: string, requested: string): Promise<FileHandle> {
  try {
    return await fs.promises.open(file, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
  } catch (error) {
    // ELOOP (EMLINK on BSD): a symlink took the file's place after it was looked at.
    if (codeOf(error) === 'ELOOP' || codeOf(error) === 'EMLINK') throw new PathChangedError(requested);
    if (codeOf(error) === 'ENOENT') throw new PathNotFoundError(requested, requested);
    if (codeOf(error) === 'ENXIO') throw new NotAFileError(requested, 'socket');
    throw error;
  }
}

async function lstatOrNull(file: string): Promise<fs.Stats | null> {
  try {
    return await fs.promises.lstat(file);
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return null;
    throw error;
  }
}

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}
