/**
 * A secret read from a file rather than from the command line (which every user of the machine
 * reads in ps). The file must be its owner's alone, as ssh wants of a private key: one that others
 * can read has already given the secret away, and one they can write lets them choose it.
 */
import fs from 'node:fs';
import { openToOthers } from '../util/owner-only.ts';
import { SecretFileError } from './errors.ts';

/** The file's text, without the line end an editor or `echo` leaves; refused when missing, open to others or empty. */
export function readSecretFile(option: string, file: string): string {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new SecretFileError(option, file, 'missing');
    throw error;
  }
  try {
    // The checks look at the file opened, not at whatever the path names a moment later.
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new SecretFileError(option, file, 'not-a-file');
    const mode = stat.mode & 0o7777;
    if (openToOthers(mode)) throw new SecretFileError(option, file, 'open-to-others', mode);
    const secret = fs.readFileSync(fd, 'utf8').trim();
    if (secret === '') throw new SecretFileError(option, file, 'empty', mode);
    return secret;
  } finally {
    fs.closeSync(fd);
  }
}
