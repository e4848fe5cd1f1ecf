/**
 * Server compaction: every model call of the run carries the compaction edit (compact_20260112)
 * with the run's trigger. The API answers with a `compaction` block when it compacted, which the
 * machine keeps verbatim and from which on it sends the context (see appendAssistantReply).
 */
import type { Model, ModelRequest } from '../model/model.ts';

export function withServerCompaction(model: Model, triggerTokens: number): Model {
  return {
    name: model.name,
    provider: model.provider,
    ...(model.price ? { price: model.price } : {}),
    ...(model.traits ? { traits: () => model.traits!() } : {}),
    createMessage: (request: ModelRequest) => model.createMessage({ ...request, serverCompaction: { triggerTokens } }),
  };
}
