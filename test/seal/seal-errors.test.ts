/**
 * The errors of sealed content say what they are (a class with a name and a kind, facts as
 * fields) and what to do next, and name keys by id only.
 */
import { describe, expect, it } from 'vitest';
import {
  KeyFileTooOpenError,
  KeyFileUnreadableError,
  KeyHookError,
  KeyListError,
  KeyNotGivenError,
  SealedValueError,
  formatMode,
} from '../../src/seal/seal-errors.ts';
import { DurableAgentError, ERROR_KINDS } from '../../src/util/durable-agent-error.ts';

describe('the errors of sealed content', () => {
  const errors = [
    new SealedValueError('message/3/0.text', 'order-42', 'rk-0123456789abcdef', 'its authentication tag does not match', 7),
    new KeyNotGivenError('k1', 'master key', 'order-42'),
    new KeyNotGivenError('rk-0123456789abcdef', 'run key'),
    new KeyListError('DURABLE_AGENT_KEYS', 'the key k1 is 31 bytes, not 32'),
    new KeyFileTooOpenError('/etc/da/keys', 0o100644),
    new KeyFileUnreadableError('/etc/da/keys', 'there is no such file'),
    new KeyHookError('open', 'arn:aws:kms:eu-west-1:1:key/a', 'it threw', { cause: new Error('denied') }),
  ];

  it('each extends DurableAgentError, declares a kind and is named as its class', () => {
    for (const error of errors) {
      expect(error).toBeInstanceOf(DurableAgentError);
      expect(ERROR_KINDS).toContain(error.kind);
      expect(error.name).toBe(error.constructor.name);
      expect(error.message.length).toBeGreaterThan(40);
    }
  });

  it('say what to do next, with the facts as fields', () => {
    const [damaged, master, run, list, open] = errors;
    expect(damaged!.message).toBe(
      'The sealed message/3/0.text of run order-42 (record 7) was refused: its authentication tag does not match. Nothing of it was decoded. ' +
        'It was damaged, cut short or moved from another run or field, or the key given as rk-0123456789abcdef is not the one it was sealed with: ' +
        'check the key, or restore the run from a backup.',
    );
    expect(master!.message).toContain('needs the master key "k1"');
    expect(master!.message).toContain('Add it to DURABLE_AGENT_KEYS or the key file (as k1:BASE64)');
    expect(run!.message).toContain('sealed with the run key "rk-0123456789abcdef"');
    expect(list!.message).toContain('openssl rand -base64 32');
    expect(open!.message).toContain('mode 0644');
    expect(open!.message).toContain('chmod 600 /etc/da/keys');
    expect(formatMode(0o100600)).toBe('0600');
  });
});
