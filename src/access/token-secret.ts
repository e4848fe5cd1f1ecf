/**
 * A token as its holder gives it, `NAME:SECRET`, and the hash that is all a tokens file keeps of
 * it. SECRET is 32 random bytes: with 256 bits of chance in it nobody guesses it or finds it from
 * its hash, so one SHA-256 is enough. A slow key derivation (scrypt, argon2) makes guessing a
 * password of a few dozen bits dear; here it would only make every request dear.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Letters, digits, ".", "_", "@" and "-", beginning with a letter or digit: a name the journal records as who decided. */
export const TOKEN_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/** A new secret: 32 random bytes, base64url (43 characters). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The SHA-256 of a secret, in hex: what the tokens file keeps. */
export function hashOf(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/**
 * Whether two hashes are the same, in a time that does not depend on where they differ: a
 * request's timing then says nothing of how much of a hash it guessed.
 */
export function sameHash(given: string, stored: string): boolean {
  const a = Buffer.from(given, 'hex');
  const b = Buffer.from(stored, 'hex');
  return a.length === 32 && b.length === 32 && timingSafeEqual(a, b);
}

/** The token of an `Authorization: Bearer TOKEN` header, or null. */
export function bearerOf(authorization: string | undefined): string | null {
  return /^Bearer (.+)$/.exec(authorization ?? '')?.[1] ?? null;
}

/** `NAME:SECRET` in its two parts; null when there is no name before a colon. */
export function splitToken(token: string): { name: string; secret: string } | null {
  const at = token.indexOf(':');
  return at > 0 ? { name: token.slice(0, at), secret: token.slice(at + 1) } : null;
}
