/**
 * Opening the files of a run's state folder as what they must be: regular files. A FIFO would
 * block the opening thread forever, a symbolic link may lead anywhere (/dev/zero), and a device
 * or a file far larger than its kind ever is would be read without end: each is refused with
 * the path and what is there, before a byte is read.
 */
import fs from 'node:fs';
import { DurableAgentError, type ErrorKind } from './durable-agent-error.ts';

const { O_RDONLY, O_RDWR, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

/** What stands at a path where a regular file belongs, or a regular file too large for its kind. */
export class NotARegularFileError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'NotARegularFileError';
  constructor(
    readonly path: string,
    /** "a FIFO", "a symbolic link", "a socket", "a device", or "N bytes…" (too large). */
    readonly found: string,
    readonly role: string,
  ) {
    super(
      `${path} should be ${role}, a regular file, but it is ${found}: nothing was read from it. ` +
        'Remove it (or put the file it should be in its place), then run the command again.',
    );
  }
}

/**
 * Opens `file` (read-only, or for writing with `write`) without following a symbolic link and
 * without blocking on a FIFO, and checks it is a regular file of at most `maxBytes`. Throws the
 * system's error when it cannot be opened (ENOENT included) or is a directory (EISDIR),
 * NotARegularFileError for the rest.
 */
export function openRegularFile(file: string, role: string, options: { write?: boolean; maxBytes?: number } = {}): number {
  let fd: number;
  try {
    fd = fs.openSync(file, (options.write ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new NotARegularFileError(file, 'a symbolic link', role);
    throw error;
  }
  try {
    const stat = fs.fstatSync(fd);
    // A directory is the environment's to fix, as the system says it (EISDIR): a file where a directory belongs, or the reverse.
    if (stat.isDirectory()) throw Object.assign(new Error(`EISDIR: illegal operation on a directory, open '${file}'`), { code: 'EISDIR', errno: -21, syscall: 'open', path: file });
    if (!stat.isFile()) throw new NotARegularFileError(file, kindOf(stat), role);
    if (options.maxBytes !== undefined && stat.size > options.maxBytes) throw new NotARegularFileError(file, `${stat.size} bytes, more than the ${options.maxBytes} such a file ever holds`, role);
    return fd;
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
}

/** The text of a regular file of at most `maxBytes` (see openRegularFile). */
export function readRegularFile(file: string, role: string, maxBytes: number): string {
  const fd = openRegularFile(file, role, { maxBytes });
  try {
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

function kindOf(stat: fs.Stats): string {
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  return 'not a regular file';
}
