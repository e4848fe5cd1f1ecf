/** Writing a user's file so that it is either the old content or the new one, and on disk. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
const TEMP_FLAGS = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;

/**
 * The temp file is made beside `file` (so the rename is atomic and stays in `file`'s directory)
 * under a fresh name, with O_EXCL|O_NOFOLLOW: a symlink planted at a temp name is never written
 * through. The rename replaces whatever is at `file`, a symlink included, rather than following it.
 * A kill before the rename leaves the temp file (`<name>.tmp-<pid>-<hex>`), never a part of `file`.
 */
export function writeFileDurably(file: string, content: string | Buffer, mode = 0o666): void {
  const tmp = tempNameFor(file);
  const fd = fs.openSync(tmp, TEMP_FLAGS, mode);
  try {
    try {
      writeAll(fd, typeof content === 'string' ? Buffer.from(content) : content);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (error) {
    fs.rmSync(tmp, { force: true });
    throw error;
  }
  fsyncDir(path.dirname(file));
}

export interface CheckedWriteOptions {
  /** Sees the temp file once it exists, before anything is written to it: throw to give up. */
  checkTemp(handle: FileHandle, tmp: string): Promise<void>;
}

/**
 * writeFileDurably without blocking the event loop, for a caller that must look at the temp file
 * before writing to it (the file tools check where it really is).
 */
export async function writeFileDurablyChecked(file: string, content: string, options: CheckedWriteOptions): Promise<void> {
  const tmp = tempNameFor(file);
  const handle = await fs.promises.open(tmp, TEMP_FLAGS, 0o666);
  try {
    try {
      await options.checkTemp(handle, tmp);
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.promises.rename(tmp, file);
  } catch (error) {
    await fs.promises.rm(tmp, { force: true });
    throw error;
  }
  fsyncDir(path.dirname(file));
}

/** Test-only: where createFileExclusively may be stopped, and a full disk. */
export interface ExclusiveWriteHooks {
  /** Called once the content is whole and fsynced under the temp name, and once it is linked to its name. */
  onPoint?: ((point: 'temp' | 'link') => void) | undefined;
  /** The write fails half-way with ENOSPC when this returns true; the error names `faultPoint`. */
  failWrite?: (() => boolean) | undefined;
  faultPoint?: string | undefined;
  /** The new file's mode before the umask (default 0o644). */
  mode?: number | undefined;
}

/**
 * Creates `file` whole, and only if it is not there: written and fsynced under a temp name,
 * linked to its name (a link, unlike a rename, fails where the name exists: a second writer is
 * refused, not written over), then the directory fsynced. A process killed at any instant leaves
 * no file or a whole one, and perhaps a temp file, which no reader takes for it. 'exists': the
 * file was there, nothing was written. The caller makes the directory.
 */
export function createFileExclusively(file: string, content: string, hooks: ExclusiveWriteHooks = {}): 'written' | 'exists' {
  const tmp = tempNameFor(file);
  try {
    const body = Buffer.from(content);
    const fd = fs.openSync(tmp, TEMP_FLAGS, hooks.mode ?? 0o644);
    try {
      if (hooks.failWrite?.()) {
        fs.writeSync(fd, body.subarray(0, body.length >> 1));
        throw Object.assign(new Error(`ENOSPC: no space left on device (simulated at ${hooks.faultPoint ?? 'write'})`), { code: 'ENOSPC' });
      }
      writeAll(fd, body);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    hooks.onPoint?.('temp');
    try {
      fs.linkSync(tmp, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return 'exists';
      throw error;
    }
    hooks.onPoint?.('link');
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  fsyncDir(path.dirname(file));
  return 'written';
}

function writeAll(fd: number, buffer: Buffer): void {
  let offset = 0;
  while (offset < buffer.length) offset += fs.writeSync(fd, buffer, offset, buffer.length - offset, offset);
}

/** Whether a file name is one of tempNameFor's: what a kill during a write left. */
export function isTempName(name: string): boolean {
  return /\.tmp-\d+-[0-9a-f]{8}$/.test(name);
}

function tempNameFor(file: string): string {
  // Capped so that a long name plus the suffix stays under the usual 255-byte name limit.
  return path.join(path.dirname(file), `${path.basename(file).slice(0, 200)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
}

export function appendDurably(file: string, line: string): void {
  const fd = fs.openSync(file, 'a');
  try {
    fs.writeSync(fd, line);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
