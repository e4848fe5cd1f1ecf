/**
 * What a webhook event's body carries: a plain run's answer and failure as ever; a sealed run's
 * metadata only, marked sealed, unless the worker was asked to include content, and then only an
 * answer it holds opened (a sealed string is never sent as the answer).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { webhookBodyOf } from '../../src/fleet/webhook-body.ts';
import { createRunKey } from '../../src/seal/envelope.ts';
import { KeyRing } from '../../src/seal/keys.ts';
import { sealValue } from '../../src/seal/value-codec.ts';

const ANSWER = 'Invoice 7 for ACME: 120 EUR, sent to billing@acme.example';
const event = (type: 'run.done' | 'run.failed' | 'run.waiting') => ({
  eventId: 'e6b1d2a4-0000-4000-8000-000000000001',
  type,
  runId: 'invoice-7',
  state: type === 'run.done' ? 'done' : type === 'run.failed' ? 'failed' : 'awaitingDecision',
  at: new Date(0),
  agent: 'billing',
  agentVersion: '3',
});

describe('a webhook body', () => {
  it('of a plain run carries its answer and what it failed of', () => {
    expect(webhookBodyOf(event('run.done'), { text: ANSWER, failure: null, sealed: false }, false)).toEqual({
      id: 'e6b1d2a4-0000-4000-8000-000000000001',
      type: 'run.done',
      run: 'invoice-7',
      state: 'done',
      at: '1970-01-01T00:00:00.000Z',
      agent: 'billing',
      agentVersion: '3',
      text: ANSWER,
    });
    expect(webhookBodyOf(event('run.failed'), { text: null, failure: 'the model API refused the request', sealed: false }, false).failure).toBe('the model API refused the request');
  });

  it('of a sealed run is metadata only, marked sealed; with includeContent, the answer the worker holds opened', async () => {
    const sealedDone = webhookBodyOf(event('run.done'), { text: ANSWER, failure: null, sealed: true }, false);
    expect(sealedDone).toMatchObject({ run: 'invoice-7', state: 'done', sealed: true });
    expect(JSON.stringify(sealedDone)).not.toContain('ACME');
    expect(webhookBodyOf(event('run.done'), { text: ANSWER, failure: null, sealed: true }, true).text).toBe(ANSWER);
    expect(webhookBodyOf(event('run.waiting'), null, false)).not.toHaveProperty('sealed');

    // Read back without the key, the answer is a sealed string: never sent, even when content is asked for.
    const { runKey } = await createRunKey(KeyRing.of([{ id: 'k1', key: randomBytes(32) }]));
    const sealedText = sealValue(ANSWER, runKey, { runId: 'invoice-7', field: 'finalText' });
    const readBack = webhookBodyOf(event('run.done'), { text: sealedText, failure: null, sealed: true }, true);
    expect(readBack).not.toHaveProperty('text');
    expect(readBack.sealed).toBe(true);
  });
});
