/**
 * The tokens file: only a hash of each secret is kept, a file others can reach is refused, an
 * unknown name or a wrong secret names no caller, a token removed stops working without a
 * restart, and the hashes are compared in constant time.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TokenNameTakenError, TokenNotFoundError, TokensFileError } from '../../src/access/access-errors.ts';
import { maySee, maySteer } from '../../src/access/caller.ts';
import { AnyTokenCheck, environmentTokenCheck, FileTokenCheck } from '../../src/access/token-checks.ts';
import { addToken, listTokens, readTokensFile, removeToken } from '../../src/access/tokens-file.ts';
import { tempDir } from '../helpers/temp-dir.ts';

vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  const timingSafeEqual = vi.fn(real.timingSafeEqual);
  return { ...real, timingSafeEqual, default: { ...real, timingSafeEqual } };
});

const bearer = (token: string) => `Bearer ${token}`;

function tokensFile(): string {
  return path.join(tempDir('da-tokens-'), 'tokens.json');
}

afterEach(() => {
  vi.mocked(crypto.timingSafeEqual).mockClear();
});

describe('the tokens file', () => {
  it('keeps only the hash of a new token, in a file of mode 0600; the token is NAME:SECRET with 32 random bytes', () => {
    const file = tokensFile();
    const { token, stored } = addToken(file, { name: 'acme-ops', role: 'steer', tenant: 'acme' });
    const [name, secret] = token.split(':');
    expect(name).toBe('acme-ops');
    expect(Buffer.from(secret!, 'base64url')).toHaveLength(32);
    expect(stored.sha256).toBe(crypto.createHash('sha256').update(secret!).digest('hex'));
    const text = fs.readFileSync(file, 'utf8');
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret!.slice(0, 12));
    expect(JSON.parse(text)).toEqual({ version: 1, tokens: [{ name: 'acme-ops', role: 'steer', tenant: 'acme', sha256: stored.sha256 }] });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    // No temp file is left beside it.
    expect(fs.readdirSync(path.dirname(file))).toEqual(['tokens.json']);
  });

  it('lists names, roles and tenants, never hashes; refuses a name already there and a name it does not have', () => {
    const file = tokensFile();
    addToken(file, { name: 'ana', role: 'read', tenant: null });
    addToken(file, { name: 'acme-ops', role: 'steer', tenant: 'acme' });
    expect(listTokens(file)).toEqual([
      { name: 'ana', role: 'read', tenant: null },
      { name: 'acme-ops', role: 'steer', tenant: 'acme' },
    ]);
    expect(() => addToken(file, { name: 'ana', role: 'steer', tenant: null })).toThrow(TokenNameTakenError);
    expect(() => removeToken(file, 'bob')).toThrow(TokenNotFoundError);
    removeToken(file, 'ana');
    expect(listTokens(file).map((token) => token.name)).toEqual(['acme-ops']);
  });

  it('is refused when others can read or change it, with the chmod that fixes it', () => {
    const file = tokensFile();
    addToken(file, { name: 'ana', role: 'read', tenant: null });
    for (const mode of [0o644, 0o620, 0o604]) {
      fs.chmodSync(file, mode);
      const refused = (() => {
        try {
          readTokensFile(file);
        } catch (error) {
          return error as TokensFileError;
        }
        throw new Error('read');
      })();
      expect(refused).toBeInstanceOf(TokensFileError);
      expect(refused).toMatchObject({ problem: 'open-to-others', mode });
      expect(refused.message).toContain(`chmod 600 ${file}`);
      expect(() => new FileTokenCheck(file)).toThrow(TokensFileError);
      expect(() => addToken(file, { name: 'bob', role: 'read', tenant: null })).toThrow(TokensFileError);
    }
  });

  it('is refused when missing (for the console) or not a tokens file', () => {
    const file = tokensFile();
    expect(() => new FileTokenCheck(file)).toThrow(/no such file/);
    fs.writeFileSync(file, '{"version":1,"tokens":[{"name":"ana","role":"admin","sha256":"00"}]}', { mode: 0o600 });
    expect(() => new FileTokenCheck(file)).toThrow(/role is read or steer/);
  });
});

describe('a check of the tokens file', () => {
  it('names the caller of a known token with its role and tenant, and no one for an unknown name, a wrong secret or no token', () => {
    const file = tokensFile();
    const { token } = addToken(file, { name: 'acme-ops', role: 'steer', tenant: 'acme' });
    const { token: reader } = addToken(file, { name: 'auditor', role: 'read', tenant: null });
    const check = new FileTokenCheck(file);
    const caller = check.callerOf(bearer(token))!;
    expect(caller).toEqual({ name: 'acme-ops', role: 'steer', tenant: 'acme' });
    expect([maySee(caller, 'acme'), maySee(caller, 'globex'), maySteer(caller)]).toEqual([true, false, true]);
    expect(check.callerOf(bearer(reader))).toEqual({ name: 'auditor', role: 'read', tenant: null });
    const secret = token.split(':')[1]!;
    expect(check.callerOf(bearer(`nobody:${secret}`))).toBeNull();
    expect(check.callerOf(bearer(`acme-ops:${secret.slice(0, -1)}x`))).toBeNull();
    expect(check.callerOf(bearer(`auditor:${secret}`))).toBeNull();
    expect(check.callerOf(bearer(secret))).toBeNull();
    expect(check.callerOf(undefined)).toBeNull();
    expect(check.callerOf(`Basic ${token}`)).toBeNull();
  });

  it('compares hashes in constant time, for a known name and an unknown one alike', () => {
    const file = tokensFile();
    const { token } = addToken(file, { name: 'ana', role: 'read', tenant: null });
    const check = new FileTokenCheck(file);
    const compare = vi.mocked(crypto.timingSafeEqual);
    compare.mockClear();
    expect(check.callerOf(bearer(token))).not.toBeNull();
    expect(check.callerOf(bearer('ana:wrong'))).toBeNull();
    expect(check.callerOf(bearer('bob:wrong'))).toBeNull();
    expect(compare).toHaveBeenCalledTimes(3);
    for (const [a, b] of compare.mock.calls) expect([(a as Buffer).length, (b as Buffer).length]).toEqual([32, 32]);
  });

  it('lets a removed token in no more, and a new one in, without being made again', () => {
    const file = tokensFile();
    const { token: ana } = addToken(file, { name: 'ana', role: 'steer', tenant: null });
    const check = new FileTokenCheck(file);
    expect(check.callerOf(bearer(ana))).not.toBeNull();
    const { token: bob } = addToken(file, { name: 'bob', role: 'read', tenant: 'acme' });
    removeToken(file, 'ana');
    expect(check.callerOf(bearer(ana))).toBeNull();
    expect(check.callerOf(bearer(bob))).toEqual({ name: 'bob', role: 'read', tenant: 'acme' });
  });

  it('lets no token in while the file is open to others or gone, and says why', () => {
    const file = tokensFile();
    const { token } = addToken(file, { name: 'ana', role: 'steer', tenant: null });
    const problems: Error[] = [];
    const check = new FileTokenCheck(file, (problem) => problems.push(problem));
    fs.chmodSync(file, 0o644);
    expect(check.callerOf(bearer(token))).toBeNull();
    expect(problems.map((problem) => problem.name)).toEqual(['TokensFileError']);
    fs.chmodSync(file, 0o600);
    expect(check.callerOf(bearer(token))).not.toBeNull();
    fs.rmSync(file);
    expect(check.callerOf(bearer(token))).toBeNull();
  });
});

describe('the environment token', () => {
  it('steers every tenant as its name, and joins the file tokens', () => {
    const file = tokensFile();
    const { token } = addToken(file, { name: 'acme-ops', role: 'read', tenant: 'acme' });
    const check = new AnyTokenCheck(environmentTokenCheck('cy:console-secret-0123456789'), new FileTokenCheck(file));
    expect(check.callerOf(bearer('cy:console-secret-0123456789'))).toEqual({ name: 'cy', role: 'steer', tenant: null });
    expect(check.callerOf(bearer('cy:console-secret-012345678'))).toBeNull();
    expect(check.callerOf(bearer(token))).toEqual({ name: 'acme-ops', role: 'read', tenant: 'acme' });
    expect(environmentTokenCheck('no-name-secret', 'ana').callerOf(bearer('no-name-secret'))).toEqual({ name: 'ana', role: 'steer', tenant: null });
  });
});
