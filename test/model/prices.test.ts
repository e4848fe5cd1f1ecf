import { describe, expect, it } from 'vitest';
import { estimateCost, priceOf } from '../../src/model/prices.ts';

describe('estimated cost', () => {
  it('knows a few Claude models, dated snapshots included', () => {
    expect(priceOf('claude-sonnet-4-5')).toEqual({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 });
    expect(priceOf('claude-sonnet-4-5-20250929')).toEqual(priceOf('claude-sonnet-4-5'));
    expect(priceOf('claude-3-5-haiku-latest')).toEqual(priceOf('claude-3-5-haiku'));
    expect(priceOf('claude-opus-4-1')?.output).toBe(75);
    expect(priceOf('claude-haiku-4-5')?.input).toBe(1);
  });

  it('knows the current lineup at its own rates', () => {
    expect(priceOf('claude-sonnet-5-5')).toEqual({ input: 2, output: 10, cacheRead: 0.1, cacheWrite: 2.5 });
    expect(priceOf('claude-opus-5-5')).toEqual({ input: 4, output: 20, cacheRead: 0.2, cacheWrite: 5 });
    expect(priceOf('claude-fable-5-1')).toEqual({ input: 10, output: 50, cacheRead: 0.25, cacheWrite: 12.5 });
    expect(priceOf('claude-opus-4-8')?.input).toBe(5);
  });

  it("gives no price to a model priced by each request's prompt length (Haiku 5.5): a total cannot tell which rate applied", () => {
    expect(priceOf('claude-haiku-5-5')).toBeNull();
  });

  it('gives no price for an unknown or scripted model rather than a guess', () => {
    expect(priceOf('scripted-demo')).toBeNull();
    expect(priceOf('claude-sonnet-9')).toBeNull();
    expect(estimateCost('scripted-demo', { input: 1e6, output: 1e6, cacheRead: 0, cacheWrite: 0 })).toBeNull();
  });

  it('adds each kind of token at its own rate', () => {
    const cost = estimateCost('claude-sonnet-4-5', { input: 1_000_000, output: 100_000, cacheRead: 2_000_000, cacheWrite: 400_000 });
    expect(cost).toBeCloseTo(3 + 1.5 + 0.6 + 1.5, 10);
  });
});
