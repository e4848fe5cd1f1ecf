/**
 * The master keys a user holds: a key ring read from the environment or from a key file, or a
 * program's own hook (a KMS holds the key and never hands it over). A master key only wraps run
 * keys (see envelope.ts); content is sealed with the run key.
 *
 * Key material lives in KeyObjects held in private fields: it never appears in an error, a log,
 * JSON.stringify or util.inspect of a ring. Errors name a key by its id or its place in the list.
 */
import { type KeyObject, createSecretKey } from 'node:crypto';
import fs from 'node:fs/promises';
import { inspect } from 'node:util';
import { KeyFileTooOpenError, KeyFileUnreadableError, KeyListError } from './seal-errors.ts';

/** The environment variable that holds the key ring: `k2:BASE64,k1:BASE64`, the first one seals. */
export const KEYS_ENV = 'DURABLE_AGENT_KEYS';

/** AES-256: a master key and a run key are 32 bytes. */
export const KEY_BYTES = 32;

/** A ring key's id: short and printable anywhere (a file name, a log line, a column). */
const RING_KEY_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

/**
 * A hook's key id may be a KMS key's name or ARN (`arn:aws:kms:…:key/…`): longer, with the
 * characters those use, but still nothing that needs quoting.
 */
const HOOK_KEY_ID = /^[A-Za-z0-9][A-Za-z0-9_.:/@+=-]{0,255}$/;

export function isRingKeyId(id: unknown): id is string {
  return typeof id === 'string' && RING_KEY_ID.test(id);
}

export function isHookKeyId(id: unknown): id is string {
  return typeof id === 'string' && HOOK_KEY_ID.test(id);
}

/** Standard or URL-safe base64, padded or not: what `openssl rand -base64 32` and Buffer print. */
const BASE64 = /^(?:[A-Za-z0-9+/]+={0,2}|[A-Za-z0-9_-]+)$/;

/**
 * Master keys read from a list. The first key seals (wraps new run keys); every key opens. Keys
 * are kept out of every printed form of the ring: only ids show.
 */
export class KeyRing {
  readonly #keys: ReadonlyMap<string, KeyObject>;
  /** The id of the key new run keys are wrapped with. */
  readonly sealingKeyId: string;
  /** Every id, the sealing one first. */
  readonly keyIds: readonly string[];

  private constructor(keys: Map<string, KeyObject>) {
    this.#keys = keys;
    this.keyIds = Object.freeze([...keys.keys()]);
    this.sealingKeyId = this.keyIds[0]!;
  }

  /**
   * A ring of these keys, the first one sealing. `source` names where they came from in the
   * errors (`DURABLE_AGENT_KEYS`, `the key file PATH`, `the keys given`).
   */
  static of(entries: ReadonlyArray<{ id: string; key: Uint8Array }>, source = 'the keys given'): KeyRing {
    if (entries.length === 0) throw new KeyListError(source, 'it holds no key');
    const keys = new Map<string, KeyObject>();
    entries.forEach(({ id, key }, index) => {
      if (!isRingKeyId(id)) throw new KeyListError(source, `the id of entry ${index + 1} is not 1 to 32 letters, digits, - or _ (starting with a letter or digit)`);
      if (keys.has(id)) throw new KeyListError(source, `the id ${id} is given twice`);
      if (!(key instanceof Uint8Array) || key.length !== KEY_BYTES) {
        throw new KeyListError(source, `the key ${id} is ${key instanceof Uint8Array ? `${key.length} bytes` : 'not bytes'}, not ${KEY_BYTES}`);
      }
      keys.set(id, createSecretKey(key));
    });
    return new KeyRing(keys);
  }

  has(id: string): boolean {
    return this.#keys.has(id);
  }

  /** The key of this id, for the envelope to wrap and unwrap with (a KeyObject never prints its bytes). */
  secretKey(id: string): KeyObject | undefined {
    return this.#keys.get(id);
  }

  toJSON(): { sealingKeyId: string; keyIds: readonly string[] } {
    return { sealingKeyId: this.sealingKeyId, keyIds: this.keyIds };
  }

  toString(): string {
    return `KeyRing(${this.keyIds.join(', ')}; seals with ${this.sealingKeyId})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/**
 * A program's own keys: the master key stays where the hook keeps it (a KMS, an HSM), and only
 * run keys pass through. Both calls may be slow (a network call): a store makes them once per run.
 */
export interface KeyHook {
  /**
   * Wraps a run's data key under the hook's current master key. `context.runKey` is the run key's
   * id: a KMS can bind the wrap to it (its encryption context).
   */
  seal(dataKey: Uint8Array, context: { runKey: string }): Promise<HookWrap>;
  /** Gives back the data key `seal` wrapped (the same 32 bytes), or throws. */
  open(wrapped: HookWrap, context: { runKey: string }): Promise<Uint8Array>;
  /**
   * The id of the master key `seal` uses now, when the hook knows it: a rotation then leaves run
   * keys already wrapped with it as they are. Absent: a rotation re-wraps every run key.
   */
  readonly sealingKeyId?: string;
}

/** What a hook makes of a data key: the id of the master key it used and the wrapped bytes as text. */
export interface HookWrap {
  /** Printable (letters, digits and `_.:/@+=-`, at most 256): a command names it when it is needed. */
  key: string;
  /** Opaque to the runtime (a KMS ciphertext in base64, say). */
  data: string;
}

/** Where master keys come from: a ring (environment, file, program) or a program's hook. */
export type MasterKeys = KeyRing | KeyHook;

/** Master keys, or a function that reads them when they are first needed (the command line's key file). */
export type KeysGiven = MasterKeys | (() => Promise<MasterKeys | null>);

export function isKeyRing(keys: MasterKeys): keys is KeyRing {
  return keys instanceof KeyRing;
}

/** The id new run keys are wrapped with, when it is known (a hook may not say). */
export function sealingKeyIdOf(keys: MasterKeys): string | null {
  return isKeyRing(keys) ? keys.sealingKeyId : (keys.sealingKeyId ?? null);
}

/**
 * Reads a list of keys: entries `ID:BASE64`, separated by commas or lines; `#` starts a comment
 * (base64 never holds one). No entry is ever echoed: a mistyped entry may be a key.
 */
export function parseKeyList(text: string, source: string): KeyRing {
  const entries: Array<{ id: string; key: Uint8Array }> = [];
  const lines = text.split(/\r?\n/);
  let number = 0;
  for (const line of lines) {
    const hash = line.indexOf('#');
    const kept = hash === -1 ? line : line.slice(0, hash);
    for (const raw of kept.split(',')) {
      const entry = raw.trim();
      if (entry === '') continue;
      number++;
      const colon = entry.indexOf(':');
      if (colon === -1) throw new KeyListError(source, `entry ${number} is not ID:BASE64 (it has no colon)`);
      const id = entry.slice(0, colon).trim();
      if (!isRingKeyId(id)) throw new KeyListError(source, `the id of entry ${number} is not 1 to 32 letters, digits, - or _ (starting with a letter or digit)`);
      const encoded = entry.slice(colon + 1).trim();
      if (!BASE64.test(encoded)) throw new KeyListError(source, `the key ${id} is not base64`);
      const key = Buffer.from(encoded, encoded.includes('-') || encoded.includes('_') ? 'base64url' : 'base64');
      if (key.length !== KEY_BYTES) throw new KeyListError(source, `the key ${id} is ${key.length} bytes, not ${KEY_BYTES}`);
      entries.push({ id, key });
    }
  }
  try {
    return KeyRing.of(entries, source);
  } finally {
    for (const { key } of entries) key.fill(0);
  }
}

/** The ring in DURABLE_AGENT_KEYS, or null when it is not set (or empty). */
export function keyRingFromEnv(env: NodeJS.ProcessEnv = process.env): KeyRing | null {
  const text = env[KEYS_ENV];
  if (text === undefined || text.trim() === '') return null;
  return parseKeyList(text, KEYS_ENV);
}

/**
 * The ring in a key file: one `ID:BASE64` a line, `#` comments, the first key sealing. The file
 * must be a regular file its owner alone can read or write (mode 0600 or 0400): a wider one is
 * refused before a byte of it is read. The mode is checked on the open file, so a swap between
 * the check and the read cannot slip a wider file in.
 */
export async function keyRingFromFile(path: string): Promise<KeyRing> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(path, 'r');
  } catch (error) {
    throw new KeyFileUnreadableError(path, codeOf(error) === 'ENOENT' ? 'there is no such file' : (codeOf(error) ?? 'it could not be opened'), { cause: error });
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new KeyFileUnreadableError(path, 'it is not a regular file');
    // Windows has no such mode bits: there the file's ACL is the guard.
    if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) throw new KeyFileTooOpenError(path, stat.mode);
    const text = await handle.readFile('utf8');
    return parseKeyList(text, `the key file ${path}`);
  } finally {
    await handle.close();
  }
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
