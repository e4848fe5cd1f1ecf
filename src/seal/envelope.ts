/**
 * Envelope encryption: each run gets its own random 256-bit data key (its run key), which seals
 * the run's content; the run key is stored only wrapped by a master key the user holds. So a
 * rotation re-wraps one small value per run instead of re-sealing its content, and deleting a
 * run's wrapped key leaves its content unreadable for good (crypto-shredding).
 *
 * A ring wraps with AES-256-GCM (random 96-bit IV); the wrap names its master key and binds it,
 * the run key's id and the format as additional authenticated data, so none of them can be
 * changed unnoticed. A hook wraps however its KMS does.
 */
import { type KeyObject, createCipheriv, createDecipheriv, createSecretKey, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { type KeyHook, KEY_BYTES, type MasterKeys, isHookKeyId, isKeyRing, sealingKeyIdOf } from './keys.ts';
import { KeyHookError, KeyNotGivenError, SealedValueError } from './seal-errors.ts';

export const WRAPPED_RUN_KEY_FORMAT = 'durable-agent/run-key';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A run key's id: `rk-` and 16 hex digits, random (it says nothing about the run or the key). */
const RUN_KEY_ID = /^rk-[0-9a-f]{16}$/;

export function isRunKeyId(id: unknown): id is string {
  return typeof id === 'string' && RUN_KEY_ID.test(id);
}

/** A run's data key, opened: it seals and opens the run's values. Prints as its id only. */
export class RunKey {
  readonly #key: KeyObject;
  constructor(
    readonly id: string,
    key: KeyObject,
  ) {
    this.#key = key;
  }

  /** The key for the cipher (a KeyObject never prints its bytes). */
  secretKey(): KeyObject {
    return this.#key;
  }

  toJSON(): { id: string } {
    return { id: this.id };
  }

  toString(): string {
    return `RunKey(${this.id})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/**
 * A run key as stored (JSON-safe): beside the run, never inside its journal, so it can be
 * re-wrapped and deleted on its own. `by` says which kind of master key wrapped it.
 */
export type WrappedRunKey =
  | { format: typeof WRAPPED_RUN_KEY_FORMAT; version: 1; key: string; master: string; by: 'ring'; iv: string; data: string }
  | { format: typeof WRAPPED_RUN_KEY_FORMAT; version: 1; key: string; master: string; by: 'hook'; data: string };

/** A new run key, random, and its wrap under the master keys' sealing key. */
export async function createRunKey(keys: MasterKeys): Promise<{ runKey: RunKey; wrapped: WrappedRunKey }> {
  const bytes = randomBytes(KEY_BYTES);
  const runKey = new RunKey(`rk-${randomBytes(8).toString('hex')}`, createSecretKey(bytes));
  try {
    return { runKey, wrapped: await wrapBytes(runKey.id, bytes, keys) };
  } finally {
    bytes.fill(0);
  }
}

/** The run key wrapped under the master keys' sealing key (the first of a ring, the hook's current one). */
export async function wrapRunKey(runKey: RunKey, keys: MasterKeys): Promise<WrappedRunKey> {
  const bytes = runKey.secretKey().export();
  try {
    return await wrapBytes(runKey.id, bytes, keys);
  } finally {
    bytes.fill(0);
  }
}

/**
 * The run key a wrap holds. A wrap by a master key that is not given is a KeyNotGivenError
 * naming it; a damaged wrap, or a different key given under its id, a SealedValueError.
 */
export async function unwrapRunKey(wrapped: unknown, keys: MasterKeys | null, runId: string | null = null): Promise<RunKey> {
  const wrap = checkedWrap(wrapped, runId);
  const bytes = await unwrapBytes(wrap, keys, runId);
  try {
    return new RunKey(wrap.key, createSecretKey(bytes));
  } finally {
    bytes.fill(0);
  }
}

/**
 * For a rotation: the wrap again under the sealing key of `keys`, opened with `openWith` (the
 * same keys, or the ones a migration comes from). A wrap already under that key is given back as
 * it is (`changed: false`), so a rotation run again after a kill redoes nothing it finished.
 */
export async function rewrapRunKey(
  wrapped: unknown,
  keys: MasterKeys,
  openWith: MasterKeys = keys,
  runId: string | null = null,
): Promise<{ wrapped: WrappedRunKey; changed: boolean }> {
  const wrap = checkedWrap(wrapped, runId);
  const sealing = sealingKeyIdOf(keys);
  if (sealing !== null && wrap.master === sealing && wrap.by === (isKeyRing(keys) ? 'ring' : 'hook')) return { wrapped: wrap, changed: false };
  const bytes = await unwrapBytes(wrap, openWith, runId);
  try {
    return { wrapped: await wrapBytes(wrap.key, bytes, keys), changed: true };
  } finally {
    bytes.fill(0);
  }
}

/** The master key id a stored wrap needs, or null when it is not a wrap this version reads. */
export function masterKeyIdOf(wrapped: unknown): string | null {
  return wrapProblem(wrapped) === null ? (wrapped as WrappedRunKey).master : null;
}

/** Why a stored value is not a wrapped run key this version reads, or null. */
export function wrapProblem(wrapped: unknown): string | null {
  if (wrapped === null || typeof wrapped !== 'object' || Array.isArray(wrapped)) return 'it is not an object';
  const w = wrapped as Record<string, unknown>;
  if (w['format'] !== WRAPPED_RUN_KEY_FORMAT) return 'it is not a wrapped run key';
  if (w['version'] !== 1) return `its version ${JSON.stringify(w['version'])} is not one this release reads`;
  if (!isRunKeyId(w['key'])) return 'its run key id is malformed';
  if (typeof w['data'] !== 'string') return 'it lacks its data';
  if (w['by'] === 'ring') return isHookKeyId(w['master']) && typeof w['iv'] === 'string' ? null : 'its master key id or IV is malformed';
  if (w['by'] === 'hook') return isHookKeyId(w['master']) ? null : 'its master key id is malformed';
  return 'it does not say what wrapped it';
}

function checkedWrap(wrapped: unknown, runId: string | null): WrappedRunKey {
  const problem = wrapProblem(wrapped);
  if (problem !== null) {
    const keyId = typeof (wrapped as { key?: unknown } | null)?.key === 'string' && isRunKeyId((wrapped as { key: string }).key) ? (wrapped as { key: string }).key : null;
    throw new SealedValueError('run key', runId, keyId, problem);
  }
  return wrapped as WrappedRunKey;
}

/** What a ring's wrap authenticates beside the key: the format, the run key's id and the master key's. */
function wrapAad(runKeyId: string, masterId: string): Buffer {
  return Buffer.from(`${WRAPPED_RUN_KEY_FORMAT}:1\0${runKeyId}\0${masterId}`, 'utf8');
}

async function wrapBytes(runKeyId: string, bytes: Buffer, keys: MasterKeys): Promise<WrappedRunKey> {
  if (isKeyRing(keys)) {
    const master = keys.sealingKeyId;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', keys.secretKey(master)!, iv);
    cipher.setAAD(wrapAad(runKeyId, master));
    const data = Buffer.concat([cipher.update(bytes), cipher.final(), cipher.getAuthTag()]);
    return { format: WRAPPED_RUN_KEY_FORMAT, version: 1, key: runKeyId, master, by: 'ring', iv: iv.toString('base64url'), data: data.toString('base64url') };
  }
  const wrap = await callHook(keys, 'seal', null, () => keys.seal(Uint8Array.from(bytes), { runKey: runKeyId }));
  if (wrap === null || typeof wrap !== 'object' || !isHookKeyId(wrap.key) || typeof wrap.data !== 'string') {
    throw new KeyHookError('seal', null, 'it did not give back { key, data }, with a key id of letters, digits and _.:/@+=- only');
  }
  return { format: WRAPPED_RUN_KEY_FORMAT, version: 1, key: runKeyId, master: wrap.key, by: 'hook', data: wrap.data };
}

async function unwrapBytes(wrap: WrappedRunKey, keys: MasterKeys | null, runId: string | null): Promise<Buffer> {
  if (wrap.by === 'ring') {
    const master = keys !== null && isKeyRing(keys) ? keys.secretKey(wrap.master) : undefined;
    if (!master) throw new KeyNotGivenError(wrap.master, 'master key', runId);
    const data = Buffer.from(wrap.data, 'base64url');
    const iv = Buffer.from(wrap.iv, 'base64url');
    if (iv.length !== IV_BYTES || data.length !== KEY_BYTES + TAG_BYTES) {
      throw new SealedValueError('run key', runId, wrap.master, `its IV or data has the wrong length (${iv.length} and ${data.length} bytes)`);
    }
    const decipher = createDecipheriv('aes-256-gcm', master, iv);
    decipher.setAAD(wrapAad(wrap.key, wrap.master));
    decipher.setAuthTag(data.subarray(KEY_BYTES));
    try {
      return Buffer.concat([decipher.update(data.subarray(0, KEY_BYTES)), decipher.final()]);
    } catch (error) {
      throw new SealedValueError('run key', runId, wrap.master, 'its authentication tag does not match', null, { cause: error });
    }
  }
  if (keys === null || isKeyRing(keys)) throw new KeyNotGivenError(wrap.master, 'master key', runId);
  const hook = keys;
  const opened = await callHook(hook, 'open', wrap.master, () => hook.open({ key: wrap.master, data: wrap.data }, { runKey: wrap.key }));
  if (!(opened instanceof Uint8Array) || opened.length !== KEY_BYTES) {
    throw new KeyHookError('open', wrap.master, `it gave back ${opened instanceof Uint8Array ? `${opened.length} bytes` : 'no bytes'}, not a ${KEY_BYTES}-byte key`);
  }
  return Buffer.from(opened);
}

async function callHook<T>(hook: KeyHook, operation: 'seal' | 'open', keyId: string | null, call: () => Promise<T>): Promise<T> {
  if (typeof hook[operation] !== 'function') throw new KeyHookError(operation, keyId, `it has no ${operation} function`);
  try {
    return await call();
  } catch (error) {
    // The hook's own words are kept as the cause only: a KMS error may quote what it was handed.
    throw new KeyHookError(operation, keyId, 'it threw', { cause: error });
  }
}

