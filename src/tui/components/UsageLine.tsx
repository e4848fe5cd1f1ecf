/** @jsxRuntime automatic @jsxImportSource react */
/** Tokens so far and the cost: counted reply by reply under a cost budget, else estimated where the model's price is known. */
import { Text } from 'ink';
import type { TokenUsage } from '../../../machines/agent-loop.types.ts';
import { formatCost, formatCount } from '../format.ts';
import { estimateCost } from '../../model/prices.ts';
import { Segments } from './Segments.tsx';

export function UsageLine({ usage, model, costUsd = null }: { usage: TokenUsage | null; model: string | null; costUsd?: number | null }) {
  if (!usage) return <Text dimColor>not known yet</Text>;
  const cost = model ? estimateCost(model, usage) : null;
  if (costUsd !== null) {
    return <Segments parts={[`in ${formatCount(usage.input)}`, `out ${formatCount(usage.output)}`, `cache read ${formatCount(usage.cacheRead)}`, `cache write ${formatCount(usage.cacheWrite)}`, <Text color="magenta">{formatCost(costUsd)} at list prices</Text>]} />;
  }
  return (
    <Segments
      parts={[
        `in ${formatCount(usage.input)}`,
        `out ${formatCount(usage.output)}`,
        `cache read ${formatCount(usage.cacheRead)}`,
        `cache write ${formatCount(usage.cacheWrite)}`,
        cost !== null ? <Text color="magenta">≈ {formatCost(cost)} (estimate)</Text> : null,
      ]}
    />
  );
}
