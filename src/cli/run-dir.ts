/** The folder a command's --dir names, checked before anything is read in it. */
import fs from 'node:fs';
import path from 'node:path';
import { NoSuchDirectoryError } from './errors.ts';

/** DIR, made absolute: a folder that is not there is refused (NoSuchDirectoryError), as every command taking --dir does. */
export function runDirOf(dir: string): string {
  const resolved = path.resolve(dir);
  const stat = fs.statSync(resolved, { throwIfNoEntry: false });
  if (!stat?.isDirectory()) throw new NoSuchDirectoryError('--dir', resolved, stat !== undefined);
  return resolved;
}
