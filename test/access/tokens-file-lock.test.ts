/**
 * Changes to one tokens file take turns: `token add` run by several processes at once keeps every
 * token; a change waits while another holds the file's lock and goes on when it is let go; a lock
 * left by a process killed mid-change is taken over.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { addToken, listTokens } from '../../src/access/tokens-file.ts';
import { runCliAsync, startCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const names = (file: string) => listTokens(file).map((token) => token.name).sort();

describe('changes to a tokens file', () => {
  it('keeps every token when eight processes add one each at the same time', async () => {
    const dir = tempDir('da-tokens-lock-');
    const file = path.join(dir, 'tokens.json');
    const added = Array.from({ length: 8 }, (_, at) => `ops-${at}`);
    const runs = await Promise.all(added.map((name) => runCliAsync(['token', 'add', name, '--role', 'read', '--tokens-file', file], { cwd: dir })));
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    expect(names(file)).toEqual(added);
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
  }, 60_000);

  it('waits while another change holds the file, then adds its token beside the one that change wrote', async () => {
    const dir = tempDir('da-tokens-lock-');
    const file = path.join(dir, 'tokens.json');
    // This process holds the lock, as a change under way would.
    fs.writeFileSync(`${file}.lock`, `${process.pid}\n`, { mode: 0o600 });
    const waiting = startCli(['token', 'add', 'second', '--role', 'steer', '--tokens-file', file], { cwd: dir });
    // While held, the waiting one writes nothing; the holder's own change lands meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fs.existsSync(file)).toBe(false);
    fs.rmSync(`${file}.lock`);
    addToken(file, { name: 'first', role: 'read', tenant: null });
    const run = await waiting.done;
    expect(run.code, run.stderr).toBe(0);
    expect(names(file)).toEqual(['first', 'second']);
  }, 60_000);

  it('takes over a lock its holder left when it was killed', () => {
    const dir = tempDir('da-tokens-lock-');
    const file = path.join(dir, 'tokens.json');
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    fs.writeFileSync(`${file}.lock`, `${gone.stdout}\n`, { mode: 0o600 });
    addToken(file, { name: 'after', role: 'read', tenant: 'acme' });
    expect(names(file)).toEqual(['after']);
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
  });
});
