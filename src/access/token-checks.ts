/**
 * The TokenChecks: the tokens of a tokens file (read again when it changes), one token of the
 * environment (DURABLE_AGENT_CONSOLE_TOKEN: a steering token of every tenant), and several at
 * once, the first that knows the token answering.
 */
import fs from 'node:fs';
import { ApiTokenFormatError } from './access-errors.ts';
import type { Caller, TokenCheck } from './caller.ts';
import { readTokensFile, signatureOf, type StoredToken } from './tokens-file.ts';
import { bearerOf, hashOf, sameHash, splitToken } from './token-secret.ts';

/** Compared against when no token has the name given, so that an unknown name costs what a known one does. */
const NO_HASH = hashOf('');

/**
 * The tokens of a file. Each request looks at the file's inode, size and times (one stat)
 * and reads it again when they changed, so a token removed stops working at once, with no
 * restart. A file that became unreadable, or open to others, lets no token in until it is put
 * right: `onProblem` is told why, once for each change.
 */
export class FileTokenCheck implements TokenCheck {
  private tokens = new Map<string, StoredToken>();
  private signature: string;

  /** Reads the file now: TokensFileError when it is missing, open to others or damaged, and nothing starts. */
  constructor(
    readonly file: string,
    private readonly onProblem: (problem: Error) => void = () => {},
  ) {
    const read = readTokensFile(file);
    this.keep(read.tokens);
    this.signature = read.signature;
  }

  callerOf(authorization: string | undefined): Caller | null {
    this.readIfChanged();
    const parts = splitToken(bearerOf(authorization) ?? '');
    if (parts === null) return null;
    const stored = this.tokens.get(parts.name);
    const matches = sameHash(hashOf(parts.secret), stored?.sha256 ?? NO_HASH);
    return matches && stored ? { name: stored.name, role: stored.role, tenant: stored.tenant } : null;
  }

  private readIfChanged(): void {
    let now: string;
    try {
      const stat = fs.statSync(this.file, { throwIfNoEntry: false });
      now = stat ? signatureOf(stat) : 'missing';
    } catch (error) {
      // A folder on the way that cannot be read: as the file being gone.
      now = `unreadable:${(error as NodeJS.ErrnoException).code}`;
    }
    if (now === this.signature) return;
    try {
      const read = readTokensFile(this.file, { missing: 'empty' });
      this.keep(read.tokens);
      this.signature = read.signature;
    } catch (error) {
      // Closed until the file is right again: a token the file no longer vouches for is not taken.
      this.tokens = new Map();
      this.signature = now;
      this.onProblem(error as Error);
    }
  }

  private keep(tokens: readonly StoredToken[]): void {
    this.tokens = new Map(tokens.map((token) => [token.name, token]));
  }
}

/** One token, whole (its hash compared, so any length takes the same time), naming one caller. */
export class SingleTokenCheck implements TokenCheck {
  private readonly hash: string;

  constructor(
    token: string,
    private readonly caller: Caller,
  ) {
    this.hash = hashOf(token);
  }

  callerOf(authorization: string | undefined): Caller | null {
    const given = bearerOf(authorization);
    return given !== null && sameHash(hashOf(given), this.hash) ? { ...this.caller } : null;
  }
}

/**
 * The environment's token (DURABLE_AGENT_CONSOLE_TOKEN=NAME:SECRET): it steers every tenant's
 * runs, as the one token of the console always has; its caller is named by NAME, or `name`.
 */
export function environmentTokenCheck(token: string, name?: string): TokenCheck {
  return new SingleTokenCheck(token, { name: name ?? splitToken(token)?.name ?? 'console', role: 'steer', tenant: null });
}

/** The shortest secret an environment's token may have: shorter ones are guessed. */
const MIN_SECRET = 16;

/**
 * The one token of an environment variable, NAME:SECRET, checked for its form: it steers every
 * tenant's runs, and NAME is who the journal records as deciding. ApiTokenFormatError otherwise.
 */
export function namedTokenCheck(token: string, variable: string): TokenCheck {
  const parts = splitToken(token);
  if (parts === null || parts.secret.length < MIN_SECRET) throw new ApiTokenFormatError(variable, MIN_SECRET);
  return environmentTokenCheck(token);
}

/** Several checks as one: the first that knows the token names the caller. */
export class AnyTokenCheck implements TokenCheck {
  private readonly checks: readonly TokenCheck[];

  constructor(...checks: TokenCheck[]) {
    this.checks = checks;
  }

  callerOf(authorization: string | undefined): Caller | null {
    for (const check of this.checks) {
      const caller = check.callerOf(authorization);
      if (caller !== null) return caller;
    }
    return null;
  }
}
