/**
 * Seals one JSON value with a run key, and opens it. A sealed value is one compact string:
 *
 *     sealed:1:<run key id>:<IV, base64url>:<ciphertext and 16-byte tag, base64url>
 *
 * A string rather than an object so that it stands wherever the plain value stood and the
 * record keeps the types its readers check (a message's content, a tool result's content, a
 * decision's reason are strings either way): a journal read without the key still folds, with
 * sealed strings in place of its content. It names the key it needs; nothing else of the value
 * shows but its length.
 *
 * The plaintext is the value's JSON, sealed with AES-256-GCM under a random 96-bit IV. The
 * additional authenticated data binds the format, the run id, the field and the key id: a value
 * moved to another run or field, damaged or cut short fails its tag and is refused whole.
 *
 * A string of this shape tells a sealed value from a plain one only where a value is known to be
 * sealed (a sealed record: see record-content.ts); a plain text may happen to start the same way.
 */
import { createCipheriv, createDecipheriv, randomFillSync } from 'node:crypto';
import type { RunKey } from './envelope.ts';
import { KeyNotGivenError, SealedValueError } from './seal-errors.ts';

const PREFIX = 'sealed:1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** 12 bytes in base64url, without padding. */
const IV_CHARS = 16;
/** A value's key id: printable and without the separator (run key ids are `rk-` and hex). */
const KEY_ID = /^[A-Za-z0-9][A-Za-z0-9_.@+=-]{0,63}$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * IVs are drawn from the system's random source a batch at a time: a call to it per value cost
 * as much as the cipher itself. Each IV is still 96 random bits, used once (the pool is refilled,
 * never reread). An IV is no secret: it is written beside the value.
 */
const ivPool = Buffer.alloc(IV_BYTES * 256);
let ivAt = ivPool.length;

function nextIv(): Buffer {
  if (ivAt + IV_BYTES > ivPool.length) {
    randomFillSync(ivPool);
    ivAt = 0;
  }
  return ivPool.subarray(ivAt, (ivAt += IV_BYTES));
}

/** Where a value belongs: sealed for this run and this field, it opens only there. */
export interface SealContext {
  runId: string;
  field: string;
}

/** Seals one value for one place. `undefined` and what JSON cannot hold are refused (a record holds neither). */
export function sealValue(value: unknown, runKey: RunKey, context: SealContext): string {
  return sealJson(jsonOf(value, context.field), runKey, `${aadHeadOf(runKey.id, context.runId)}${context.field}`);
}

function jsonOf(value: unknown, field: string): string {
  const json = JSON.stringify(value);
  if (json === undefined) throw new TypeError(`The value of ${field} has no JSON form: it cannot be sealed.`);
  return json;
}

/**
 * One value's JSON sealed under a fresh IV, as a sealed string. Node's cipher costs more per
 * call than per byte at a record's sizes, so this makes the fewest calls and copies it can: the
 * ciphertext and tag are laid into one buffer and encoded once.
 */
function sealJson(json: string, runKey: RunKey, aad: string): string {
  const iv = nextIv();
  const cipher = createCipheriv('aes-256-gcm', runKey.secretKey(), iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = cipher.update(json, 'utf8');
  cipher.final();
  const data = Buffer.allocUnsafe(body.length + TAG_BYTES);
  body.copy(data, 0);
  cipher.getAuthTag().copy(data, body.length);
  return `${PREFIX}${runKey.id}:${iv.toString('base64url')}:${data.toString('base64url')}`;
}

/**
 * Opens a value sealed for this place. A value sealed with another run key (or none given) is a
 * KeyNotGivenError naming the key it needs; anything that is not a whole, authentic sealed value
 * of this run and field is a SealedValueError. Never a partial value, never a guess.
 */
export function openValue(sealed: unknown, runKey: RunKey | null, context: SealContext): unknown {
  const parts = partsOf(sealed);
  if (parts === null) throw new SealedValueError(context.field, context.runId, null, 'it is not a sealed value');
  if (runKey === null || runKey.id !== parts.keyId) throw new KeyNotGivenError(parts.keyId, 'run key', context.runId);
  const iv = Buffer.from(parts.iv, 'base64url');
  const data = Buffer.from(parts.data, 'base64url');
  if (data.length < TAG_BYTES) throw new SealedValueError(context.field, context.runId, parts.keyId, 'it is shorter than its authentication tag');
  const decipher = createDecipheriv('aes-256-gcm', runKey.secretKey(), iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(`${aadHeadOf(parts.keyId, context.runId)}${context.field}`, 'utf8'));
  decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
  let json: string;
  try {
    json = Buffer.concat([decipher.update(data.subarray(0, data.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch (error) {
    throw new SealedValueError(context.field, context.runId, parts.keyId, 'its authentication tag does not match', null, { cause: error });
  }
  // Authentic means sealed by sealValue, which sealed JSON: a parse error here would be a bug.
  return JSON.parse(json);
}

/** Whether a value has the shape of a sealed value (see the module's note on where that decides). */
export function isSealedValue(value: unknown): value is string {
  return partsOf(value) !== null;
}

/** The key id a sealed value names, or null when it is not one. */
export function sealedKeyIdOf(value: unknown): string | null {
  return partsOf(value)?.keyId ?? null;
}

interface SealedParts {
  keyId: string;
  iv: string;
  data: string;
}

function partsOf(value: unknown): SealedParts | null {
  if (typeof value !== 'string' || !value.startsWith(PREFIX)) return null;
  const keyEnd = value.indexOf(':', PREFIX.length);
  if (keyEnd === -1) return null;
  const ivEnd = keyEnd + 1 + IV_CHARS;
  if (value.charCodeAt(ivEnd) !== 0x3a) return null;
  const keyId = value.slice(PREFIX.length, keyEnd);
  const iv = value.slice(keyEnd + 1, ivEnd);
  const data = value.slice(ivEnd + 1);
  if (!KEY_ID.test(keyId) || !BASE64URL.test(iv) || !BASE64URL.test(data)) return null;
  return { keyId, iv, data };
}

/**
 * The additional authenticated data is the format and key, the run, the field, NUL-separated: the
 * field comes last, so no two places share one. This is all of it but the field (built once a run).
 */
function aadHeadOf(keyId: string, runId: string): string {
  return `${PREFIX}${keyId}\0${runId}\0`;
}

/** Seals the values of one run: what the record mapping is given on write. */
export interface ValueSealer {
  /** The run key's id, written on each sealed record. */
  readonly keyId: string;
  seal(value: unknown, field: string): string;
}

/** Opens the values of one run: what the record mapping is given on read. */
export interface ValueOpener {
  open(sealed: unknown, field: string): unknown;
}

export function sealerFor(runKey: RunKey, runId: string): ValueSealer {
  const head = aadHeadOf(runKey.id, runId);
  return { keyId: runKey.id, seal: (value, field) => sealJson(jsonOf(value, field), runKey, `${head}${field}`) };
}

/** An opener; with no run key (its master key not given) every value is a KeyNotGivenError naming its key. */
export function openerFor(runKey: RunKey | null, runId: string): ValueOpener {
  return { open: (sealed, field) => openValue(sealed, runKey, { runId, field }) };
}
