/**
 * `durable-agent token add|list|remove` through the real binary: add prints the token once on
 * stdout and keeps its hash only; list shows names, roles and tenants, never a hash; remove takes
 * one out; a name already there, a file others can read and a token on the command line are refused.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

describe('durable-agent token', () => {
  it('adds, lists and removes tokens; the file keeps no secret', async () => {
    const dir = tempDir('da-cli-token-');
    const file = path.join(dir, 'tokens.json');
    const cli = (...args: string[]) => runCliAsync(['token', ...args, '--tokens-file', file], { cwd: dir });
    const added = await cli('add', 'acme-ops', '--role', 'steer', '--tenant', 'acme');
    expect(added.code, added.stderr).toBe(0);
    const token = added.stdout.trim();
    expect(token).toMatch(/^acme-ops:[A-Za-z0-9_-]{43}$/);
    expect(added.stderr).toContain('only time the token is shown');
    expect(added.stderr).not.toContain(token.split(':')[1]);
    const reader = await cli('add', 'auditor', '--role', 'read', '--json');
    expect(reader.code, reader.stderr).toBe(0);
    const { token: readToken, ...readerShown } = JSON.parse(reader.stdout) as { token: string };
    expect(readerShown).toEqual({ name: 'auditor', role: 'read', tenant: null });
    const text = fs.readFileSync(file, 'utf8');
    for (const secret of [token, readToken].map((t) => t.split(':')[1]!)) expect(text).not.toContain(secret);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    const again = await cli('add', 'acme-ops', '--role', 'read');
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already has a token named acme-ops');

    const listed = await cli('list');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/NAME +ROLE +TENANT/);
    expect(listed.stdout).toMatch(/acme-ops +steer +acme/);
    expect(listed.stdout).toMatch(/auditor +read +\(every tenant\)/);
    const json = await cli('list', '--json');
    expect(JSON.parse(json.stdout)).toEqual([
      { name: 'acme-ops', role: 'steer', tenant: 'acme' },
      { name: 'auditor', role: 'read', tenant: null },
    ]);
    expect(json.stdout).not.toContain('sha256');

    const removed = await cli('remove', 'acme-ops');
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse((await cli('list', '--json')).stdout)).toEqual([{ name: 'auditor', role: 'read', tenant: null }]);
    const gone = await cli('remove', 'acme-ops');
    expect(gone.code).toBe(2);
    expect(gone.stderr).toContain('has no token named acme-ops');
  });

  it('refuses a tokens file others can read, a role it does not know, and a missing --tokens-file', async () => {
    const dir = tempDir('da-cli-token-');
    const file = path.join(dir, 'tokens.json');
    expect((await runCliAsync(['token', 'add', 'ana', '--role', 'read', '--tokens-file', file], { cwd: dir })).code).toBe(0);
    fs.chmodSync(file, 0o644);
    const wide = await runCliAsync(['token', 'list', '--tokens-file', file], { cwd: dir });
    expect(wide.code).toBe(2);
    expect(wide.stderr).toContain(`chmod 600 ${file}`);
    const role = await runCliAsync(['token', 'add', 'bob', '--role', 'admin', '--tokens-file', file], { cwd: dir });
    expect(role.code).toBe(2);
    expect(role.stderr).toContain('--role read or --role steer');
    const noFile = await runCliAsync(['token', 'list'], { cwd: dir });
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain('--tokens-file FILE');
  });
});
