/** How the calls of one reply are run: how many at once, and for how long each. */
import { option } from './option.ts';

export const toolConcurrency = option({
  key: 'toolConcurrency',
  type: 'integer',
  value: 'N',
  help: "how many read-only calls of one reply run at once; other calls run alone, in the model's order (1: one call at a time)",
  min: 1,
  max: 64,
  defaultText: '4',
  api: 'RunParts.toolConcurrency',
});
export const toolTimeout = option({
  key: 'toolTimeoutMs',
  type: 'duration',
  value: 'DURATION',
  help: "time limit of one tool call where the tool sets none; past it ctx.signal aborts and the model gets an error result",
  min: 1_000,
  max: 24 * 3_600_000,
  defaultText: '2m',
  api: 'RunParts.toolTimeoutMs',
});
