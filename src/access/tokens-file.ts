/**
 * The tokens file: who may use the console and the HTTP API, each token by its name, its role
 * and its tenant, and of its secret only the SHA-256 (token-secret.ts says why that is enough):
 *
 *   {"version":1,"tokens":[{"name":"acme-ops","role":"steer","tenant":"acme","sha256":"<hex>"}]}
 *
 * A tenant absent or null: every tenant's runs. The file is its owner's alone, as a secret file
 * is (util/owner-only.ts): whoever can change it can give themselves a token. It is written whole
 * or not at all (a temp file renamed over it), with mode 0600, by one change at a time
 * (tokens-file-lock.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { checkTenant } from '../core/tenant.ts';
import { writeFileDurably } from '../util/durable-file.ts';
import { withTokensFileLock } from './tokens-file-lock.ts';
import { openToOthers } from '../util/owner-only.ts';
import type { CallerRole } from './caller.ts';
import { TokenNameError, TokenNameTakenError, TokenNotFoundError, TokensFileError } from './access-errors.ts';
import { hashOf, newSecret, TOKEN_NAME } from './token-secret.ts';

export const TOKENS_FILE_VERSION = 1;

export interface StoredToken {
  name: string;
  role: CallerRole;
  /** The only tenant whose runs the token sees; null: every tenant's. */
  tenant: string | null;
  /** The SHA-256 of its secret, in hex. */
  sha256: string;
}

/** The file's tokens, and what changes when the file does (its inode, size, save and change times), read from the file opened. */
export interface TokensRead {
  tokens: StoredToken[];
  signature: string;
}

/** What a look at the path says of the file now, to tell whether it changed since it was read (a chmod changes ctime alone). */
export function signatureOf(stat: fs.Stats): string {
  return `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
}

/** The file's tokens; TokensFileError when it is missing (unless `missing: 'empty'`), open to others or not a tokens file. */
export function readTokensFile(file: string, options: { missing?: 'refuse' | 'empty' } = {}): TokensRead {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      if (options.missing === 'empty') return { tokens: [], signature: 'missing' };
      throw new TokensFileError(file, 'missing');
    }
    throw error;
  }
  try {
    // The checks look at the file opened, not at whatever the path names a moment later.
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new TokensFileError(file, 'not-a-file');
    const mode = stat.mode & 0o7777;
    if (openToOthers(mode)) throw new TokensFileError(file, 'open-to-others', mode);
    return { tokens: parseTokens(file, fs.readFileSync(fd, 'utf8'), mode), signature: signatureOf(stat) };
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes the tokens in place of the file's, whole, mode 0600, in its folder (which a change made before it took the lock there). */
function writeTokensFile(file: string, tokens: readonly StoredToken[]): void {
  const body = { version: TOKENS_FILE_VERSION, tokens: tokens.map(({ name, role, tenant, sha256 }) => ({ name, role, tenant, sha256 })) };
  writeFileDurably(file, `${JSON.stringify(body, null, 2)}\n`, 0o600);
}

export interface TokenAsked {
  name: string;
  role: CallerRole;
  tenant: string | null;
}

/**
 * Makes a token and keeps its hash in the file (made when missing); returns the token, NAME:SECRET,
 * which is nowhere else: whoever is to use it must be given it now.
 */
export function addToken(file: string, asked: TokenAsked): { token: string; stored: StoredToken } {
  if (!TOKEN_NAME.test(asked.name)) throw new TokenNameError(asked.name);
  const tenant = asked.tenant === null ? null : checkTenant(asked.tenant)!;
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  return withTokensFileLock(file, () => {
    const { tokens } = readTokensFile(file, { missing: 'empty' });
    if (tokens.some((token) => token.name === asked.name)) throw new TokenNameTakenError(asked.name, file);
    const secret = newSecret();
    const stored: StoredToken = { name: asked.name, role: asked.role, tenant, sha256: hashOf(secret) };
    writeTokensFile(file, [...tokens, stored]);
    return { token: `${asked.name}:${secret}`, stored };
  });
}

/** Takes a token out of the file: it stops working at the next request that uses it. */
export function removeToken(file: string, name: string): StoredToken {
  // Read before any lock is made: a missing or foreign file is refused without one beside it.
  const before = readTokensFile(file);
  return withTokensFileLock(file, () => {
    // What was read stands unless another change replaced the file meanwhile (each write is a new file).
    const { tokens } = unchangedSince(file, before) ? before : readTokensFile(file);
    const gone = tokens.find((token) => token.name === name);
    if (!gone) throw new TokenNotFoundError(name, file);
    writeTokensFile(file, tokens.filter((token) => token !== gone));
    return gone;
  });
}

/** Whether the file at the path is still the one `read` was read from, unchanged. */
function unchangedSince(file: string, read: TokensRead): boolean {
  try {
    return signatureOf(fs.statSync(file)) === read.signature;
  } catch {
    return false;
  }
}

/** The file's tokens, without their hashes. */
export function listTokens(file: string): Array<Omit<StoredToken, 'sha256'>> {
  return readTokensFile(file).tokens.map(({ name, role, tenant }) => ({ name, role, tenant }));
}

function parseTokens(file: string, text: string, mode: number): StoredToken[] {
  const damaged = (detail: string) => new TokensFileError(file, 'damaged', mode, detail);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw damaged('not JSON');
  }
  if (!body || typeof body !== 'object' || (body as { version?: unknown }).version !== TOKENS_FILE_VERSION) throw damaged(`no "version": ${TOKENS_FILE_VERSION}`);
  const list = (body as { tokens?: unknown }).tokens;
  if (!Array.isArray(list)) throw damaged('no "tokens" list');
  const names = new Set<string>();
  return list.map((entry: unknown, at) => {
    const { name, role, tenant, sha256 } = (entry ?? {}) as Record<string, unknown>;
    if (typeof name !== 'string' || !TOKEN_NAME.test(name)) throw damaged(`token ${at + 1} has no name a token can have`);
    if (names.has(name)) throw damaged(`two tokens are named ${name}`);
    names.add(name);
    if (role !== 'read' && role !== 'steer') throw damaged(`token ${name}: role is read or steer`);
    if (tenant !== undefined && tenant !== null && !isTenant(tenant)) throw damaged(`token ${name}: tenant is a tenant's name or null`);
    if (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256)) throw damaged(`token ${name}: sha256 is 64 hex digits`);
    return { name, role, tenant: typeof tenant === 'string' ? tenant : null, sha256 };
  });
}

/** A tenant's name as core/tenant.ts checks it (a damaged file says which token, not the tenant's error). */
function isTenant(tenant: unknown): tenant is string {
  try {
    return checkTenant(tenant) !== undefined;
  } catch {
    return false;
  }
}
