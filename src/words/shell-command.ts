/**
 * Commands we print for the user to paste (the resume hint): quoted for a POSIX shell so that
 * nothing in them is ever expanded, and spelled `npx --no-install durable-agent` where the bare
 * command would not be found.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_NAME } from '../util/package-version.ts';

/** A word as a POSIX shell reads it back unchanged: bare when it is plainly safe, else in single quotes. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * How the user's shell starts this CLI: `durable-agent` when an executable of that name is on
 * PATH and the process was not started by npm (npx and npm scripts put node_modules/.bin on
 * the PATH they hand down, not on the user's), else `npx --no-install durable-agent`: pasted
 * where the package is not installed, a bare npx would fetch whatever the registry has under
 * that name; this one runs the installed command or says it is not there.
 */
export function cliInvocation(env: NodeJS.ProcessEnv): string {
  if (!env.npm_command && onPath(PACKAGE_NAME, env)) return PACKAGE_NAME;
  return `npx --no-install ${PACKAGE_NAME}`;
}

/** The whole command line: the invocation, then each word quoted. */
export function cliCommand(env: NodeJS.ProcessEnv, words: readonly string[]): string {
  return [cliInvocation(env), ...words.map(shellQuote)].join(' ');
}

/** `--dir DIR` for a command the user pastes, unless the run is in the current directory. */
export function dirWords(dir: string, runId: string | null = null): string[] {
  return [...(path.resolve(dir) === process.cwd() ? [] : ['--dir', path.resolve(dir)]), ...(runId === null ? [] : ['--run', runId])];
}

/**
 * `--database-url URL` for a command the user pastes: none when the URL came from the environment
 * (the pasted command finds it there too), else the URL given, its password left out so that no
 * secret is printed (pg then takes it from PGPASSWORD or ~/.pgpass, as psql does).
 */
export function databaseWords(given: string | null | undefined): string[] {
  if (!given) return [];
  try {
    const url = new URL(given);
    if (!url.password) return ['--database-url', given];
    url.password = '';
    return ['--database-url', url.toString()];
  } catch {
    return ['--database-url', given];
  }
}

function onPath(name: string, env: NodeJS.ProcessEnv): boolean {
  const names = process.platform === 'win32' ? [`${name}.cmd`, `${name}.exe`, name] : [name];
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const file of names) {
      try {
        const full = path.join(dir, file);
        if (!fs.statSync(full).isFile()) continue;
        fs.accessSync(full, fs.constants.X_OK);
        return true;
      } catch {
        // not here: the next entry
      }
    }
  }
  return false;
}
