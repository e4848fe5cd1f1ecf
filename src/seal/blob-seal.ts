/**
 * A sealed run's blobs (the images and documents its tools returned, kept once each beside the
 * journal): their bytes sealed with the run key, and their names a keyed hash of the bytes.
 *
 * A plain blob is named by the SHA-256 of its bytes: anyone who can list the folder can confirm a
 * guess ("is this the scan of that passport?") by hashing it. A sealed blob is named
 * `hmac-<hex>`: HMAC-SHA256 of the bytes under a key derived from the run key (HKDF, its own
 * label), so the name still dedups a payload within the run and checks it on read, but says
 * nothing to whoever lacks the key, and the same bytes get another name in every run.
 *
 * A sealed blob file is
 *
 *     DASB 0x01 <key id length, 1 byte> <run key id> <IV, 12 bytes> <ciphertext> <tag, 16 bytes>
 *
 * sealed with AES-256-GCM under the run key, the additional authenticated data binding the
 * format, the key id, the run and the blob's name: a blob moved to another name or run, damaged
 * or cut short fails its tag and is refused whole. Only its length shows.
 */
import { createCipheriv, createDecipheriv, createHmac, createSecretKey, hkdfSync, type KeyObject, randomBytes } from 'node:crypto';
import type { RunKey } from './envelope.ts';
import { KeyNotGivenError, SealedValueError } from './seal-errors.ts';

/** The name of a sealed blob: `hmac-` and 64 hex digits. */
export const SEALED_BLOB_NAME = /^hmac-[0-9a-f]{64}$/;
const NAME_PREFIX = 'hmac-';
const MAGIC = Buffer.from('DASB\x01', 'latin1');
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The label the name key is derived under: a key for names is never the key for bytes. */
const NAME_KEY_INFO = 'durable-agent/blob-name:1';

export function isSealedBlobName(name: string): boolean {
  return SEALED_BLOB_NAME.test(name);
}

/** Seals and opens the blobs of one run, with its run key. */
export class BlobSealer {
  readonly #runKey: RunKey;
  readonly #nameKey: KeyObject;

  constructor(
    runKey: RunKey,
    readonly runId: string,
  ) {
    this.#runKey = runKey;
    const derived = Buffer.from(hkdfSync('sha256', runKey.secretKey(), Buffer.alloc(0), NAME_KEY_INFO, 32));
    this.#nameKey = createSecretKey(derived);
    derived.fill(0);
  }

  get keyId(): string {
    return this.#runKey.id;
  }

  /** The blob's name: a keyed hash of its bytes, which only the run key's holder can compute. */
  nameOf(bytes: Buffer): string {
    return `${NAME_PREFIX}${createHmac('sha256', this.#nameKey).update(bytes).digest('hex')}`;
  }

  /** The file's bytes for a blob of this name. */
  seal(name: string, bytes: Buffer): Buffer {
    const keyId = Buffer.from(this.#runKey.id, 'latin1');
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#runKey.secretKey(), iv);
    cipher.setAAD(aadOf(this.#runKey.id, this.runId, name));
    return Buffer.concat([MAGIC, Buffer.from([keyId.length]), keyId, iv, cipher.update(bytes), cipher.final(), cipher.getAuthTag()]);
  }

  /**
   * The bytes a sealed blob file holds, checked against its name. A blob sealed under another run
   * key is a KeyNotGivenError naming it; one that is not whole and authentic, a SealedValueError.
   */
  open(name: string, stored: Buffer): Buffer {
    const field = `blob ${name}`;
    const keyId = sealedBlobKeyId(stored);
    if (keyId === null) throw new SealedValueError(field, this.runId, null, 'it is not a sealed blob');
    if (keyId !== this.#runKey.id) throw new KeyNotGivenError(keyId, 'run key', this.runId);
    const start = MAGIC.length + 1 + keyId.length;
    if (stored.length < start + IV_BYTES + TAG_BYTES) throw new SealedValueError(field, this.runId, keyId, 'it is shorter than its IV and authentication tag');
    const decipher = createDecipheriv('aes-256-gcm', this.#runKey.secretKey(), stored.subarray(start, start + IV_BYTES));
    decipher.setAAD(aadOf(keyId, this.runId, name));
    decipher.setAuthTag(stored.subarray(stored.length - TAG_BYTES));
    let bytes: Buffer;
    try {
      bytes = Buffer.concat([decipher.update(stored.subarray(start + IV_BYTES, stored.length - TAG_BYTES)), decipher.final()]);
    } catch (error) {
      throw new SealedValueError(field, this.runId, keyId, 'its authentication tag does not match', null, { cause: error });
    }
    // Authentic, so sealed by this run under this name: a name that differs would be a bug, said all the same.
    if (this.nameOf(bytes) !== name) throw new SealedValueError(field, this.runId, keyId, 'its bytes do not hash to its name');
    return bytes;
  }
}

/** The run key id a sealed blob file names, or null when the bytes are not a sealed blob. */
export function sealedBlobKeyId(stored: Buffer): string | null {
  if (stored.length < MAGIC.length + 1 || !stored.subarray(0, MAGIC.length).equals(MAGIC)) return null;
  const length = stored[MAGIC.length]!;
  if (length === 0 || stored.length < MAGIC.length + 1 + length) return null;
  return stored.toString('latin1', MAGIC.length + 1, MAGIC.length + 1 + length);
}

/** The bytes a sealed blob of `plainBytes` takes on disk. */
export function sealedBlobSize(keyId: string, plainBytes: number): number {
  return MAGIC.length + 1 + Buffer.byteLength(keyId, 'latin1') + IV_BYTES + plainBytes + TAG_BYTES;
}

function aadOf(keyId: string, runId: string, name: string): Buffer {
  return Buffer.from(`durable-agent/blob:1\0${keyId}\0${runId}\0${name}`, 'utf8');
}
