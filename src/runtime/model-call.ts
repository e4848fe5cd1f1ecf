/**
 * The effect of `awaitingModel` and `closed`: ask the model (or act on the reply held at
 * MAX_TURNS, once the run has more turns), count what the reply cost the moment it arrives,
 * check it against the protocol, and take it as MODEL_REPLY (checkpoint A when it names tools)
 * or MODEL_REPLY_INVALID. Nothing of a reply is recorded before it is whole.
 */
import type { AnnouncedEffect } from '../../machines/agent-loop.effects.ts';
import type { AgentContext, AgentEvent, AgentStateName, ContainerMark, DecisionNeed, ModelReply, TokenUsage } from '../../machines/agent-loop.types.ts';
import { ZERO_USAGE } from '../../machines/agent-loop.types.ts';
import type { RunEvent } from '../core/run-events.ts';
import type { Capability } from '../core/session.ts';
import type { Model, StreamDelta, ToolSpec } from '../model/model.ts';
import { receiveReply, replyProblem } from '../model/reply-check.ts';
import { RecordEncodeError } from '../store/journal/framing.ts';
import { isThenable } from '../util/thenable.ts';
import { LiveToolUseIds } from './live-tool-use-ids.ts';

/** What the model call uses of the run: the model and what it is asked with, the context, and the machine's steps. */
export interface ModelCallParts {
  readonly model: Model;
  /** The most tokens the model may write in one reply. */
  readonly maxTokens: number;
  readonly registry: { readonly specs: readonly ToolSpec[] };
  /** Asked which calls of a reply need a person's decision. */
  readonly capabilities: readonly Pick<Capability, 'decisionNeeds'>[];
  context(): AgentContext;
  state(): AgentStateName;
  emit(event: RunEvent): void;
  countUsage(usage: TokenUsage, usageNote: string | null, answeredBy?: string): Promise<void>;
  step(event: AgentEvent): Promise<AnnouncedEffect | null>;
}

/**
 * The container id to send, or null: the one the run's last reply named, until it expires (an
 * expired one is refused by the API; without it the request gets a fresh container).
 */
export function liveContainer(container: ContainerMark | null | undefined, now: number): string | null {
  if (!container) return null;
  const expires = Date.parse(container.expiresAt);
  return Number.isFinite(expires) && expires > now ? container.id : null;
}

export class ModelCall {
  /** The tool_use ids the run has used (a reply that reuses one is refused). */
  private readonly usedIds = new LiveToolUseIds();

  /** Made once for the run, not at every call: a build that keeps function names (tsx) names each arrow it makes. */
  private readonly onStream: (delta: StreamDelta) => void;
  private readonly onNotice: (notice: string) => void;

  constructor(private readonly session: ModelCallParts) {
    this.onStream = (delta) => session.emit({ type: 'model-stream', delta });
    this.onNotice = (notice) => session.emit({ type: 'model-notice', model: session.model.name, notice });
  }

  async ask(): Promise<AnnouncedEffect | null> {
    const { session } = this;
    const context = session.context();
    let reply: ModelReply;
    let uncountable: string | null = null;
    if (context.heldReply && session.state() === 'awaitingModel') {
      // The reply that met MAX_TURNS, reopened with more turns: act on it (its tokens were counted).
      reply = { ...context.heldReply, usage: ZERO_USAGE };
    } else {
      const { model, maxTokens, registry } = session;
      const { system, messages } = context;
      session.emit({ type: 'model-call', turn: context.turn, model: model.name, provider: model.provider ?? null, maxTokens, system, messages });
      const { onStream, onNotice } = this;
      const container = liveContainer(context.container, Date.now());
      const received = receiveReply(
        await model.createMessage({ system, messages, tools: registry.specs, maxTokens, onStream, onNotice, earlierReplies: context.compacted?.replies, ...(container ? { container } : {}) }),
      );
      const { reply: answer, usage, usageNote } = received;
      session.emit({ type: 'model-reply', stopReason: answer.stop_reason, usage, usageNote, reply: answer });
      await session.countUsage(received.usage, received.usageNote, answer.model);
      reply = received.reply;
      uncountable = received.usageProblem;
    }
    const problem = uncountable ?? replyProblem(reply, this.usedIds.of(context));
    if (problem) return session.step({ type: 'MODEL_REPLY_INVALID', reason: problem, usage: ZERO_USAGE });
    let effect: AnnouncedEffect | null;
    try {
      const needs = this.decisionNeeds(reply);
      effect = await session.step({ type: 'MODEL_REPLY', reply, needsDecision: isThenable(needs) ? await needs : needs });
    } catch (error) {
      // A reply from a user's own Model may hold what JSON cannot (a BigInt): refused like any bad reply.
      if (!(error instanceof RecordEncodeError)) throw error;
      return session.step({ type: 'MODEL_REPLY_INVALID', reason: `the reply holds a value the journal cannot record (${error.problem})`, usage: ZERO_USAGE });
    }
    this.usedIds.add(reply);
    return effect;
  }

  /** At once when every capability answers at once (asked at every reply: no async frame nor await then). */
  private decisionNeeds(reply: ModelReply): Promise<Record<string, DecisionNeed> | undefined> | Record<string, DecisionNeed> | undefined {
    const { capabilities } = this.session;
    let needs: Record<string, DecisionNeed> | undefined;
    for (let index = 0; index < capabilities.length; index++) {
      const found = capabilities[index]!.decisionNeeds?.(reply);
      // A thenable is waited for as `await` would (a capability may answer with any).
      if (isThenable(found)) return this.decisionNeedsFrom(reply, index, found, needs);
      if (found) needs = { ...needs, ...found };
    }
    return needs;
  }

  /** The rest of decisionNeeds once a capability answers with a promise, in the capabilities' order. */
  private async decisionNeedsFrom(
    reply: ModelReply,
    index: number,
    first: PromiseLike<Record<string, DecisionNeed> | undefined>,
    sofar: Record<string, DecisionNeed> | undefined,
  ): Promise<Record<string, DecisionNeed> | undefined> {
    const { capabilities } = this.session;
    let needs = sofar;
    for (let at = index; at < capabilities.length; at++) {
      const found = at === index ? await first : await capabilities[at]!.decisionNeeds?.(reply);
      if (found) needs = { ...needs, ...found };
    }
    return needs;
  }
}
