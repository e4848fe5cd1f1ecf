/**
 * Envelope encryption: a run key per run, stored wrapped by a master key (a ring's or a hook's),
 * opened only with that key, re-wrapped under the current one for a rotation; a damaged wrap or
 * a wrong key is refused, a missing key named.
 */
import { createSecretKey, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { RunKey, type WrappedRunKey, createRunKey, masterKeyIdOf, rewrapRunKey, unwrapRunKey, wrapRunKey } from '../../src/seal/envelope.ts';
import { type KeyHook, KeyRing } from '../../src/seal/keys.ts';
import { KeyHookError, KeyNotGivenError, SealedValueError } from '../../src/seal/seal-errors.ts';
import { openValue, sealValue } from '../../src/seal/value-codec.ts';

const k1 = randomBytes(32);
const k2 = randomBytes(32);
const ringK1 = KeyRing.of([{ id: 'k1', key: k1 }]);
const ringK2K1 = KeyRing.of([
  { id: 'k2', key: k2 },
  { id: 'k1', key: k1 },
]);
const ringK2 = KeyRing.of([{ id: 'k2', key: k2 }]);
const place = { runId: 'run-1', field: 'task' };

/** A stand-in for a KMS: it holds its master key itself and wraps with it (its own way, here AES-GCM too). */
function fakeKms(keyId: string) {
  const master = KeyRing.of([{ id: 'kms', key: randomBytes(32) }]);
  const calls: string[] = [];
  const hook: KeyHook = {
    sealingKeyId: keyId,
    async seal(dataKey, context) {
      calls.push(`seal ${context.runKey}`);
      const wrapped = await wrapRunKey(new RunKey(context.runKey, createSecretKey(Buffer.from(dataKey))), master);
      return { key: keyId, data: Buffer.from(JSON.stringify(wrapped)).toString('base64') };
    },
    async open(wrapped, context) {
      calls.push(`open ${context.runKey} with ${wrapped.key}`);
      if (wrapped.key !== keyId) throw new Error(`no such KMS key ${wrapped.key}`);
      const runKey = await unwrapRunKey(JSON.parse(Buffer.from(wrapped.data, 'base64').toString()), master);
      return runKey.secretKey().export();
    },
  };
  return { hook, calls };
}

describe('a run key', () => {
  it('is random per run, wrapped under the first key of the ring, and opens with any ring that holds that key', async () => {
    const a = await createRunKey(ringK2K1);
    const b = await createRunKey(ringK2K1);
    expect(a.runKey.id).toMatch(/^rk-[0-9a-f]{16}$/);
    expect(a.runKey.id).not.toBe(b.runKey.id);
    expect(a.runKey.secretKey().export().equals(b.runKey.secretKey().export())).toBe(false);
    expect(a.wrapped).toMatchObject({ format: 'durable-agent/run-key', version: 1, key: a.runKey.id, master: 'k2', by: 'ring' });
    expect(Buffer.from((a.wrapped as { iv: string }).iv, 'base64url')).toHaveLength(12);
    expect(masterKeyIdOf(a.wrapped)).toBe('k2');
    // Stored as JSON, read back.
    const stored = JSON.parse(JSON.stringify(a.wrapped)) as WrappedRunKey;
    const opened = await unwrapRunKey(stored, ringK2);
    expect(opened.id).toBe(a.runKey.id);
    expect(openValue(sealValue({ secret: 'x' }, a.runKey, place), opened, place)).toEqual({ secret: 'x' });
  });

  it('never prints its bytes', async () => {
    const { runKey, wrapped } = await createRunKey(ringK1);
    const bytes = runKey.secretKey().export();
    for (const text of [JSON.stringify(runKey), inspect(runKey, { showHidden: true, depth: 9 }), String(runKey), JSON.stringify({ runKey, wrapped })]) {
      expect(text).not.toContain(bytes.toString('base64'));
      expect(text).not.toContain(bytes.toString('base64url'));
      expect(text).not.toContain(bytes.toString('hex'));
    }
    expect(JSON.parse(JSON.stringify(runKey))).toEqual({ id: runKey.id });
  });

  it('without its master key is a KeyNotGivenError naming that key, never a guess', async () => {
    const { wrapped } = await createRunKey(ringK1);
    for (const keys of [ringK2, null]) {
      const error = (await unwrapRunKey(wrapped, keys, 'run-9').catch((e: unknown) => e)) as KeyNotGivenError;
      expect(error).toBeInstanceOf(KeyNotGivenError);
      expect(error.name).toBe('KeyNotGivenError');
      expect(error.keyId).toBe('k1');
      expect(error.role).toBe('master key');
      expect(error.message).toContain('"k1"');
      expect(error.message).toContain('run-9');
      expect(error.message).toContain('DURABLE_AGENT_KEYS');
    }
  });

  it('refuses a damaged wrap, a wrap whose ids were changed, and another key given under the same id', async () => {
    const { wrapped } = await createRunKey(ringK1);
    const w = wrapped as Extract<WrappedRunKey, { by: 'ring' }>;
    const flipped = Buffer.from(w.data, 'base64url');
    flipped[3]! ^= 1;
    const damaged: unknown[] = [
      { ...w, data: flipped.toString('base64url') },
      { ...w, data: w.data.slice(0, -4) },
      { ...w, iv: Buffer.alloc(12).toString('base64url') },
      { ...w, key: 'rk-0000000000000000' },
      { ...w, format: 'something' },
      { ...w, version: 2 },
      'not a wrap',
    ];
    for (const wrap of damaged) await expect(unwrapRunKey(wrap, ringK1)).rejects.toThrow(SealedValueError);
    // The master id swapped for another the ring holds: the tag binds the id.
    await expect(unwrapRunKey({ ...w, master: 'k2' }, ringK2K1)).rejects.toThrow(SealedValueError);
    const impostor = KeyRing.of([{ id: 'k1', key: randomBytes(32) }]);
    const error = (await unwrapRunKey(w, impostor).catch((e: unknown) => e)) as SealedValueError;
    expect(error).toBeInstanceOf(SealedValueError);
    expect(error.message).toContain('the key given as k1 is not the one it was sealed with');
  });
});

describe('rotation', () => {
  it('re-wraps under the new first key, keeps the same run key, and leaves a wrap already under it as it is', async () => {
    const { runKey, wrapped } = await createRunKey(ringK1);
    const sealed = sealValue('the task', runKey, place);
    const first = await rewrapRunKey(wrapped, ringK2K1);
    expect(first.changed).toBe(true);
    expect(first.wrapped).toMatchObject({ key: runKey.id, master: 'k2' });
    // k1 dropped: the run still opens.
    expect(openValue(sealed, await unwrapRunKey(first.wrapped, ringK2), place)).toBe('the task');
    const again = await rewrapRunKey(first.wrapped, ringK2K1);
    expect(again).toEqual({ wrapped: first.wrapped, changed: false });
    // A rotation that lacks the old key names it.
    await expect(rewrapRunKey(wrapped, ringK2)).rejects.toThrow(KeyNotGivenError);
  });
});

describe('a keys hook (a KMS holds the master key)', () => {
  it('wraps and opens through the hook, names the hook key, and re-wraps from a ring into it', async () => {
    const { hook, calls } = fakeKms('arn:aws:kms:eu-west-1:111122223333:key/one');
    const { runKey, wrapped } = await createRunKey(hook);
    expect(wrapped).toMatchObject({ by: 'hook', master: 'arn:aws:kms:eu-west-1:111122223333:key/one', key: runKey.id });
    const opened = await unwrapRunKey(JSON.parse(JSON.stringify(wrapped)), hook);
    expect(opened.secretKey().export().equals(runKey.secretKey().export())).toBe(true);
    expect(calls).toEqual([`seal ${runKey.id}`, `open ${runKey.id} with arn:aws:kms:eu-west-1:111122223333:key/one`]);

    const fromRing = await createRunKey(ringK1);
    const moved = await rewrapRunKey(fromRing.wrapped, hook, ringK1);
    expect(moved.changed).toBe(true);
    expect(moved.wrapped.by).toBe('hook');
    expect((await unwrapRunKey(moved.wrapped, hook)).id).toBe(fromRing.runKey.id);
    expect(await rewrapRunKey(moved.wrapped, hook)).toEqual({ wrapped: moved.wrapped, changed: false });
    // A hook's wrap without the hook names the key it needs.
    await expect(unwrapRunKey(wrapped, ringK1)).rejects.toThrow(KeyNotGivenError);
  });

  it('a hook that throws or gives back no key is a KeyHookError, its own error kept as the cause only', async () => {
    const secretish = 'kms said: plaintext blob AAAA';
    const throwing: KeyHook = {
      seal: async () => {
        throw new Error(secretish);
      },
      open: async () => {
        throw new Error(secretish);
      },
    };
    const error = (await createRunKey(throwing).catch((e: unknown) => e)) as KeyHookError;
    expect(error).toBeInstanceOf(KeyHookError);
    expect(error.operation).toBe('seal');
    expect(error.message).not.toContain(secretish);
    expect((error.cause as Error).message).toBe(secretish);

    const { hook } = fakeKms('kms-1');
    const { wrapped } = await createRunKey(hook);
    await expect(unwrapRunKey(wrapped, throwing)).rejects.toThrow(KeyHookError);
    const short: KeyHook = { ...hook, open: async () => new Uint8Array(16) };
    await expect(unwrapRunKey(wrapped, short)).rejects.toThrow(/gave back 16 bytes, not a 32-byte key/);
    const badId: KeyHook = { ...hook, seal: async () => ({ key: 'has space', data: 'x' }) };
    await expect(createRunKey(badId)).rejects.toThrow(KeyHookError);
  });
});
