/**
 * The commands we print for pasting: a POSIX shell reads every word back exactly, expanding
 * nothing, and the command is spelled so that the user's shell finds it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliCommand, cliInvocation, databaseWords, shellQuote } from '../../src/words/shell-command.ts';
import { tempDir } from '../helpers/temp-dir.ts';

/** The words `sh -c` makes of a command line, each ended by a NUL byte by printf. */
function wordsOf(commandLine: string, cwd: string): string[] {
  const result = spawnSync('sh', ['-c', `set -- ${commandLine}; printf '%s\\0' "$@"`], { cwd, encoding: 'utf8' });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout.split('\0').slice(0, -1);
}

const HOSTILE = [
  `/tmp/y$(touch pwned) "x" 'q'`,
  '/tmp/a b\tc',
  '/tmp/`touch pwned`',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a path a shell would expand, which the quoting must keep literal
  '/tmp/${HOME}',
  '/tmp/~user/*',
  "it's",
  "''",
  '',
  '/tmp/semi;colon&and|pipe>out<in',
  '/tmp/line\nbreak',
  '/tmp/ünïcode ✓',
  '-starts-with-dash',
];

describe('shellQuote', () => {
  it('leaves plain words bare', () => {
    for (const word of ['demo', '--resume', '/tmp/demo-run', 'claude-sonnet-4-5', 'a=b', 'user@host:5432/db,x%20']) expect(shellQuote(word)).toBe(word);
  });

  it.each(HOSTILE)('quotes %j so that sh reads it back unchanged and runs nothing', (word) => {
    const cwd = tempDir();
    expect(wordsOf(shellQuote(word), cwd)).toEqual([word]);
    expect(fs.readdirSync(cwd)).toEqual([]); // nothing was run: no file named pwned, no redirection
  });

  it('quotes with single quotes, a single quote as \'\\\'\'', () => {
    expect(shellQuote(`/tmp/y$(id) "x" 'q'`)).toBe(`'/tmp/y$(id) "x" '\\''q'\\'''`);
  });
});

describe('cliInvocation', () => {
  function pathWith(executable: boolean): string {
    const bin = tempDir();
    const file = path.join(bin, 'durable-agent');
    fs.writeFileSync(file, '#!/bin/sh\n', { mode: executable ? 0o755 : 0o644 });
    return bin;
  }

  it('is `durable-agent` when an executable of that name is on PATH', () => {
    expect(cliInvocation({ PATH: `${tempDir()}${path.delimiter}${pathWith(true)}` })).toBe('durable-agent');
  });

  it('is `npx --no-install durable-agent` when none is, or only one that cannot run', () => {
    expect(cliInvocation({ PATH: tempDir() })).toBe('npx --no-install durable-agent');
    expect(cliInvocation({ PATH: pathWith(false) })).toBe('npx --no-install durable-agent');
    expect(cliInvocation({})).toBe('npx --no-install durable-agent');
  });

  it('is `npx --no-install durable-agent` when npm started the process (its PATH is not the user\'s)', () => {
    expect(cliInvocation({ PATH: pathWith(true), npm_command: 'exec' })).toBe('npx --no-install durable-agent');
  });

  it('joins the invocation and the quoted words', () => {
    expect(cliCommand({ PATH: '' }, ['demo', '--resume', '--dir', '/tmp/a b'])).toBe("npx --no-install durable-agent demo --resume --dir '/tmp/a b'");
  });
});

describe('the database a printed command names', () => {
  it('is none when the environment gave it, else the URL given without its password', () => {
    expect(databaseWords(null)).toEqual([]);
    expect(databaseWords(undefined)).toEqual([]);
    expect(databaseWords('postgresql://ana@db.example:5432/agents')).toEqual(['--database-url', 'postgresql://ana@db.example:5432/agents']);
    expect(databaseWords('postgresql://ana:s3cret@db.example:5432/agents?sslmode=require')).toEqual(['--database-url', 'postgresql://ana@db.example:5432/agents?sslmode=require']);
    expect(databaseWords('postgresql://ana:s3cret@db.example/agents').join(' ')).not.toContain('s3cret');
  });
});
