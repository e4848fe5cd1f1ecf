/**
 * One sealed value: a compact string that names its key, opens to the same JSON value, and only
 * for the run and field it was sealed for. A damaged, cut-short or moved value is refused whole;
 * one under a key not given names that key.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRunKey } from '../../src/seal/envelope.ts';
import { KeyRing } from '../../src/seal/keys.ts';
import { KeyNotGivenError, SealedValueError } from '../../src/seal/seal-errors.ts';
import { isSealedValue, openValue, openerFor, sealValue, sealedKeyIdOf, sealerFor } from '../../src/seal/value-codec.ts';

const ring = KeyRing.of([{ id: 'k1', key: randomBytes(32) }]);
const { runKey } = await createRunKey(ring);
const { runKey: otherKey } = await createRunKey(ring);
const here = { runId: 'order-42', field: 'message/3/0.text' };

function refusal(run: () => unknown): SealedValueError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SealedValueError);
    return error as SealedValueError;
  }
  throw new Error('expected a SealedValueError');
}

describe('sealValue and openValue', () => {
  it('give back every JSON value as it was, in a string that names the run key and shows no plaintext', () => {
    const values: unknown[] = ['Refund order 42 to ana@example.com', '', 0, -1.5, true, false, null, [], {}, ['é', { deep: { list: [1, 'two', null] } }], 'ünïcødé ✓ 🚀'];
    for (const value of values) {
      const sealed = sealValue(value, runKey, here);
      expect(sealed).toMatch(new RegExp(`^sealed:1:${runKey.id}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$`));
      expect(isSealedValue(sealed)).toBe(true);
      expect(sealedKeyIdOf(sealed)).toBe(runKey.id);
      expect(openValue(sealed, runKey, here)).toEqual(value);
    }
    const text = 'Refund order 42 to ana@example.com';
    const sealed = sealValue(text, runKey, here);
    expect(sealed).not.toContain('ana@example.com');
    expect(sealed).not.toContain(Buffer.from(text).toString('base64').slice(0, 12));
    // A fresh IV each time: the same value twice seals differently.
    expect(sealValue(text, runKey, here)).not.toBe(sealed);
    expect(() => sealValue(undefined, runKey, here)).toThrow(/no JSON form/);
  });

  it('refuses a value moved to another run or another field', () => {
    const sealed = sealValue('the reason', runKey, here);
    for (const elsewhere of [
      { runId: 'order-43', field: here.field },
      { runId: here.runId, field: 'message/3/1.text' },
      { runId: here.runId, field: 'decision/toolu_01.reason' },
    ]) {
      const error = refusal(() => openValue(sealed, runKey, elsewhere));
      expect(error.problem).toBe('its authentication tag does not match');
      expect(error.field).toBe(elsewhere.field);
      expect(error.keyId).toBe(runKey.id);
      expect(error.message).toContain('Nothing of it was decoded');
      expect(error.message).not.toContain('the reason');
    }
  });

  it('refuses every single flipped character and every cut, never half-decoding', () => {
    const sealed = sealValue({ to: 'ana@example.com', amount: 4200 }, runKey, here);
    const header = `sealed:1:${runKey.id}:`.length;
    for (let i = header; i < sealed.length; i++) {
      const c = sealed[i]!;
      const flipped = `${sealed.slice(0, i)}${c === 'A' ? 'B' : 'A'}${sealed.slice(i + 1)}`;
      // A base64url digit's last bits may be padding the decoder drops: such a change leaves the bytes as they were.
      const sameBytes = Buffer.from(flipped.slice(header), 'base64url').equals(Buffer.from(sealed.slice(header), 'base64url'));
      if (!sameBytes && flipped !== sealed) expect(() => openValue(flipped, runKey, here)).toThrow(SealedValueError);
    }
    for (let cut = header + 17; cut < sealed.length; cut++) expect(() => openValue(sealed.slice(0, cut), runKey, here)).toThrow(SealedValueError);
    expect(refusal(() => openValue(`${sealed.slice(0, header + 17)}AAAA`, runKey, here)).problem).toBe('it is shorter than its authentication tag');
    for (const notSealed of ['plain text', 42, null, { sealed: 1 }, 'sealed:1:', `sealed:2:${runKey.id}:AAAAAAAAAAAAAAAA:AAAA`]) {
      expect(refusal(() => openValue(notSealed, runKey, here)).problem).toBe('it is not a sealed value');
    }
  });

  it('a value under a run key that is not given is a KeyNotGivenError naming it', () => {
    const sealed = sealValue('secret', runKey, here);
    for (const given of [otherKey, null]) {
      let error: unknown;
      try {
        openValue(sealed, given, here);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(KeyNotGivenError);
      expect((error as KeyNotGivenError).keyId).toBe(runKey.id);
      expect((error as KeyNotGivenError).role).toBe('run key');
      expect((error as Error).message).toContain(runKey.id);
      expect((error as Error).message).not.toContain('secret');
    }
  });

  it('tells a sealed value from a plain one by its whole shape', () => {
    expect(isSealedValue('plain')).toBe(false);
    expect(isSealedValue('sealed: the deal is closed')).toBe(false);
    expect(isSealedValue('sealed:1:k1:short:AAAA')).toBe(false);
    expect(isSealedValue({ sealed: 1, key: 'k1' })).toBe(false);
    expect(isSealedValue(null)).toBe(false);
    expect(sealedKeyIdOf('plain')).toBeNull();
  });

  it('a sealer and an opener bind one run', () => {
    const sealer = sealerFor(runKey, 'run-a');
    expect(sealer.keyId).toBe(runKey.id);
    const sealed = sealer.seal({ q: 'x' }, 'pending/toolu_1.input');
    expect(openerFor(runKey, 'run-a').open(sealed, 'pending/toolu_1.input')).toEqual({ q: 'x' });
    expect(() => openerFor(runKey, 'run-b').open(sealed, 'pending/toolu_1.input')).toThrow(SealedValueError);
    expect(() => openerFor(null, 'run-a').open(sealed, 'pending/toolu_1.input')).toThrow(KeyNotGivenError);
  });
});
