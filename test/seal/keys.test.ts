/**
 * The master keys a user holds: read from DURABLE_AGENT_KEYS and from a real key file (refused
 * when its group or others can read it), validated, and never shown: no error, JSON text or
 * inspection of a ring holds a byte of a key.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { KEYS_ENV, KeyRing, keyRingFromEnv, keyRingFromFile, parseKeyList } from '../../src/seal/keys.ts';
import { KeyFileTooOpenError, KeyFileUnreadableError, KeyListError } from '../../src/seal/seal-errors.ts';
import { DurableAgentError } from '../../src/util/durable-agent-error.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const k1 = randomBytes(32);
const k2 = randomBytes(32);

/** Every form a key's bytes could take in a text. */
function forms(key: Buffer): string[] {
  return [key.toString('base64'), key.toString('base64url'), key.toString('hex'), key.toString('base64').slice(0, 12)];
}

function expectNoKeyIn(text: string, ...keys: Buffer[]): void {
  for (const key of keys) for (const form of forms(key)) expect(text).not.toContain(form);
}

function caught(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('a key ring from DURABLE_AGENT_KEYS', () => {
  it('reads ID:BASE64 entries, the first one sealing and every one opening; unset or empty is no ring', () => {
    const ring = keyRingFromEnv({ [KEYS_ENV]: ` k2:${k2.toString('base64')} , k1:${k1.toString('base64url')} ,` });
    expect(ring).not.toBeNull();
    expect(ring!.sealingKeyId).toBe('k2');
    expect(ring!.keyIds).toEqual(['k2', 'k1']);
    expect(ring!.has('k1')).toBe(true);
    expect(ring!.secretKey('k1')!.export().equals(k1)).toBe(true);
    expect(ring!.secretKey('k2')!.export().equals(k2)).toBe(true);
    expect(keyRingFromEnv({})).toBeNull();
    expect(keyRingFromEnv({ [KEYS_ENV]: '  ' })).toBeNull();
  });

  it('refuses a malformed list with a KeyListError that names the entry or its id, never the key', () => {
    const b64 = (key: Buffer) => key.toString('base64');
    const cases: Array<[string, RegExp]> = [
      [b64(k1), /entry 1 is not ID:BASE64/],
      [`k1:${b64(k1)},${b64(k2)}`, /entry 2 is not ID:BASE64/],
      [`bad id!:${b64(k1)}`, /the id of entry 1 is not 1 to 32 letters/],
      [`${'a'.repeat(33)}:${b64(k1)}`, /the id of entry 1 is not/],
      [`k1:${b64(k1)},k1:${b64(k2)}`, /the id k1 is given twice/],
      [`k1:${b64(k1)}!`, /the key k1 is not base64/],
      [`k1:${k1.subarray(0, 31).toString('base64')}`, /the key k1 is 31 bytes, not 32/],
      [`k1:${Buffer.concat([k1, k2]).toString('base64')}`, /the key k1 is 64 bytes, not 32/],
    ];
    for (const [text, problem] of cases) {
      const error = caught(() => parseKeyList(text, KEYS_ENV));
      expect(error).toBeInstanceOf(KeyListError);
      expect(error).toBeInstanceOf(DurableAgentError);
      expect((error as KeyListError).kind).toBe('refused');
      expect(error.name).toBe('KeyListError');
      expect(error.message).toMatch(problem);
      expect(error.message).toContain('DURABLE_AGENT_KEYS');
      expect(error.message).toContain('openssl rand -base64 32');
      expectNoKeyIn(`${error.message} ${inspect(error)} ${JSON.stringify(error)}`, k1, k2);
    }
  });

  it('KeyRing.of validates ids and lengths the same way', () => {
    expect(() => KeyRing.of([])).toThrow(/holds no key/);
    expect(() => KeyRing.of([{ id: 'k1', key: k1.subarray(0, 16) }])).toThrow(/the key k1 is 16 bytes, not 32/);
    expect(() => KeyRing.of([{ id: '../k1', key: k1 }])).toThrow(KeyListError);
    expect(KeyRing.of([{ id: 'prod-2026_01', key: k1 }]).sealingKeyId).toBe('prod-2026_01');
  });
});

describe('a key ring never shows its keys', () => {
  it('JSON.stringify, util.inspect (deep, hidden), toString and String() show ids only', () => {
    const ring = keyRingFromEnv({ [KEYS_ENV]: `k2:${k2.toString('base64')},k1:${k1.toString('base64')}` })!;
    const shown = [
      JSON.stringify(ring),
      JSON.stringify({ nested: { ring } }),
      inspect(ring),
      inspect(ring, { showHidden: true, depth: Number.POSITIVE_INFINITY, getters: true }),
      inspect({ ring }, { showHidden: true, depth: Number.POSITIVE_INFINITY }),
      String(ring),
      `${ring}`,
    ];
    for (const text of shown) {
      expectNoKeyIn(text, k1, k2);
      expect(text).toContain('k2');
    }
    expect(JSON.parse(JSON.stringify(ring))).toEqual({ sealingKeyId: 'k2', keyIds: ['k2', 'k1'] });
    expect(Object.keys(ring)).not.toContain('keys');
  });
});

describe('a key ring from a key file', () => {
  function keyFile(text: string, mode: number): string {
    const file = path.join(tempDir('da-seal-'), 'keys');
    fs.writeFileSync(file, text, { mode });
    fs.chmodSync(file, mode);
    return file;
  }

  it('reads one key a line, with comments and blank lines, from a file its owner alone can read', async () => {
    const file = keyFile(`# production keys, newest first\n\nk2:${k2.toString('base64')}   # since December\nk1:${k1.toString('base64')}\n`, 0o600);
    const ring = await keyRingFromFile(file);
    expect(ring.keyIds).toEqual(['k2', 'k1']);
    expect(ring.secretKey('k1')!.export().equals(k1)).toBe(true);
    const readOnly = keyFile(`k1:${k1.toString('base64')}\n`, 0o400);
    expect((await keyRingFromFile(readOnly)).keyIds).toEqual(['k1']);
  });

  it.skipIf(process.platform === 'win32')('refuses a file its group or others can read or write, naming the mode and chmod 600', async () => {
    for (const mode of [0o644, 0o640, 0o604, 0o620, 0o666]) {
      const file = keyFile(`k1:${k1.toString('base64')}\n`, mode);
      const error = (await keyRingFromFile(file).catch((e: unknown) => e)) as Error;
      expect(error).toBeInstanceOf(KeyFileTooOpenError);
      expect(error.name).toBe('KeyFileTooOpenError');
      expect((error as KeyFileTooOpenError).mode & 0o777).toBe(mode);
      expect((error as KeyFileTooOpenError).path).toBe(file);
      expect(error.message).toContain(`mode 0${mode.toString(8)}`);
      expect(error.message).toContain(`chmod 600 ${file}`);
      expectNoKeyIn(`${error.message} ${inspect(error)}`, k1);
    }
  });

  it('says which line is wrong without echoing it, and names a missing file or a folder', async () => {
    const file = keyFile(`k2:${k2.toString('base64')}\n${k1.toString('base64')}\n`, 0o600);
    const error = (await keyRingFromFile(file).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(KeyListError);
    expect(error.message).toContain(`the key file ${file}`);
    expect(error.message).toContain('entry 2 is not ID:BASE64');
    expectNoKeyIn(error.message, k1, k2);

    const missing = (await keyRingFromFile(path.join(tempDir('da-seal-'), 'none')).catch((e: unknown) => e)) as Error;
    expect(missing).toBeInstanceOf(KeyFileUnreadableError);
    expect(missing.message).toContain('there is no such file');
    const folder = tempDir('da-seal-');
    fs.chmodSync(folder, 0o700);
    await expect(keyRingFromFile(folder)).rejects.toThrow(/is not a regular file/);
  });
});
