/**
 * Client compaction, the runtime's side: before a model call, measure the context; at or above
 * the trigger, the machine enters `compacting` (COMPACT, saved), and its effect is a model call
 * that summarises the older turns; the summary takes their place (COMPACTED, saved). The
 * messages it replaces stay in the journal's earlier records, for history and the visualizer.
 */
import type { AnnouncedEffect } from '../../machines/agent-loop.effects.ts';
import { isCompactionCut, textOf } from '../../machines/agent-loop.logic.ts';
import type { AgentContext, AgentEvent, ContentBlock, Message, ModelReply } from '../../machines/agent-loop.types.ts';
import { ZERO_USAGE } from '../../machines/agent-loop.types.ts';
import type { Model, ToolSpec } from '../model/model.ts';
import { receiveReply, replyProblem } from '../model/reply-check.ts';
import type { RunEvent, RunObserver } from '../core/run-events.ts';
import type { Capability, RunSession } from '../core/session.ts';
import type { PinnedCompaction } from '../store/journal/journal-record.ts';
import { triggerTokensOf } from './compaction-settings.ts';
import { estimateMessageTokens, estimateRequestTokens } from '../model/estimate-tokens.ts';

/** The recent turns kept verbatim take at most this share of the trigger; the rest is summarised. */
export const KEEP_SHARE = 0.3;

export const SUMMARY_INSTRUCTION =
  'The conversation above is about to be cut from the context because it grew too long. Write a summary of it that ' +
  'lets you carry on the task without it: the task, what has been done and found so far (with the facts, names and ' +
  'values the next steps need), what is still to do, and anything the user asked for along the way. Reply with the ' +
  'summary only, as plain text; do not call a tool.';

export const SUMMARY_HEADING = '[Summary of the earlier part of this conversation, written when it outgrew the context window]';

/** What the summarising call needs besides the session. */
export interface SummaryCall {
  model: Model;
  tools: readonly ToolSpec[];
  maxTokens: number;
}

/**
 * Client compaction as a capability of the run: before a model call it takes COMPACT when the
 * context is due, and it carries out `compacting`'s effect (the summarising call).
 */
export class ContextCompaction implements Capability {
  readonly name = 'compaction';
  readonly effects = { requestCompaction: (session: RunSession) => this.compact(session) };

  /** What the last reply's own usage says the context held, and the reply it came with. */
  private lastMeasured: { content: readonly ContentBlock[]; tokens: number } | null = null;

  constructor(
    /** Client compaction only: null for off and for server compaction (the API does it). */
    private readonly settings: PinnedCompaction | null,
    private readonly call: SummaryCall,
  ) {}

  /** Reads each reply's token figures as it arrives: the best measure of the context there is. */
  observe(next: RunObserver): RunObserver {
    if (!this.settings) return next;
    return (event: RunEvent) => {
      if (event.type === 'model-reply') {
        const { input, cacheRead, cacheWrite, output } = event.usage;
        this.lastMeasured = { content: event.reply.content, tokens: input + cacheRead + cacheWrite + output };
      }
      next(event);
    };
  }

  /** Before a model call: the COMPACT step when it is due (null, at once, when it is not). */
  beforeModelCall(session: RunSession): AgentEvent | null {
    return this.due(session.context(), session.registry.specs);
  }

  /** The COMPACT event when the context has reached the trigger and can be cut, else null. */
  due(context: AgentContext, tools: readonly ToolSpec[]): AgentEvent | null {
    if (!this.settings || context.heldReply) return null;
    const { system } = context;
    const limit = triggerTokensOf(this.settings);
    const estimatedTokens = Math.max(estimateRequestTokens(system, tools, context.messages), this.measuredTokens(context.messages));
    if (estimatedTokens < limit) return null;
    const keepFrom = cutOf(context, limit);
    return keepFrom === null ? null : { type: 'COMPACT', estimatedTokens, limit, keepFrom };
  }

  /** The effect of `compacting`: ask for the summary, then put it in place of the older turns. */
  async compact(session: RunSession): Promise<AnnouncedEffect | null> {
    const context = session.context();
    const replaced = this.settings ? cutOf(context, triggerTokensOf(this.settings)) : null;
    if (replaced === null) {
      // Only a resume with another window can get here: nothing to cut is a reply that cannot be used.
      return session.step({ type: 'MODEL_REPLY_INVALID', reason: 'the context has no older turns to summarise', usage: ZERO_USAGE });
    }
    const received = receiveReply(
      await this.call.model.createMessage({
        system: context.system,
        messages: summaryRequestOf(context.messages.slice(0, replaced)),
        tools: this.call.tools,
        maxTokens: this.call.maxTokens,
        earlierReplies: context.compacted?.replies ?? 0,
        purpose: 'summary',
        onNotice: (notice) => session.emit({ type: 'model-notice', model: this.call.model.name, notice }),
      }),
    );
    await session.countUsage(received.usage, received.usageNote);
    const problem = received.usageProblem ?? summaryProblem(received.reply);
    if (problem) return session.step({ type: 'MODEL_REPLY_INVALID', reason: problem, usage: ZERO_USAGE });
    this.lastMeasured = null;
    const summary: Message = { role: 'user', content: [{ type: 'text', text: `${SUMMARY_HEADING}\n\n${textOf(received.reply.content)}` }] };
    return session.step({ type: 'COMPACTED', summary, replaced });
  }

  /** The last reply's own count plus the estimate of what was added after it (null: no reply to go by). */
  private measuredTokens(messages: readonly Message[]): number {
    const last = this.lastMeasured;
    if (!last) return 0;
    for (let i = messages.length - 1; i >= 0; i--) {
      if (messages[i]!.content !== last.content) continue;
      let tokens = last.tokens;
      for (let j = i + 1; j < messages.length; j++) tokens += estimateMessageTokens(messages[j]!);
      return tokens;
    }
    return 0;
  }
}

/**
 * Where the kept recent turns begin: the earliest cut whose kept part fits KEEP_SHARE of the
 * trigger, else the last turn alone. Null when nothing older can go (the context is one turn,
 * or only an earlier summary would be summarised again).
 */
export function cutOf(context: AgentContext, limit: number): number | null {
  const { messages } = context;
  const budget = limit * KEEP_SHARE;
  let kept = 0;
  let cut: number | null = null;
  for (let i = messages.length - 1; i > 0; i--) {
    kept += estimateMessageTokens(messages[i]!);
    if (!isCompactionCut(messages, i)) continue;
    if (cut !== null && kept > budget) break;
    cut = i;
  }
  if (cut === null) return null;
  if (cut === 1 && context.compacted) return null;
  return cut;
}

/** The older turns, and the instruction to summarise them, as the last user message. */
export function summaryRequestOf(older: readonly Message[]): Message[] {
  const messages = older.slice();
  const last = messages[messages.length - 1]!;
  const instruction: ContentBlock = { type: 'text', text: SUMMARY_INSTRUCTION };
  if (last.role === 'user') {
    const content: ContentBlock[] = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content.slice();
    messages[messages.length - 1] = { role: 'user', content: [...content, instruction] };
  } else {
    messages.push({ role: 'user', content: [instruction] });
  }
  return messages;
}

function summaryProblem(reply: ModelReply): string | null {
  const problem = replyProblem(reply, new Set());
  if (problem) return `the summarising reply: ${problem}`;
  if (!textOf(reply.content)) return 'the summarising reply holds no text';
  return null;
}
