import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { frameLine, parseLine } from '../../src/store/journal/framing.ts';

describe('frameLine', () => {
  it('writes the checksum of the JSON bytes, a space, the JSON and a newline, for any text (multi-byte, lone surrogates)', () => {
    const documents = [{ a: 1 }, { text: 'héllo \ud800 lone \udfff', emoji: '💥'.repeat(300) }, { big: 'x'.repeat(70_000), list: [1, { z: 'ü' }] }, 'plain', null];
    for (const document of documents) {
      const line = frameLine(document);
      const json = Buffer.from(JSON.stringify(document), 'utf8');
      expect(line.subarray(9, line.length - 1).equals(json)).toBe(true);
      expect(line.toString('latin1', 0, 9)).toBe(`${crc32(json).toString(16).padStart(8, '0')} `);
      expect(line[line.length - 1]).toBe(0x0a);
      expect(parseLine(line, 0, line.length - 1, 1)).toEqual(JSON.parse(json.toString('utf8')));
    }
  });
});
