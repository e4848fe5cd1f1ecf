/** A text of a run's content as a screen shows it: the text, or what it needs when the run was read sealed. */
import { sealedKeyIdOf } from '../seal/value-codec.ts';

/** Never a sealed string printed as if it were the text: it names the run key the text is sealed with. */
export function contentWords(text: string): string {
  const keyId = sealedKeyIdOf(text);
  return keyId === null ? text : `(sealed with the run key ${keyId}: give the master key to read it)`;
}

/** The same, short, for a column. */
export function contentCell(text: string): string {
  return sealedKeyIdOf(text) === null ? text : '(sealed)';
}
