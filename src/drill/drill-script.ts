/**
 * The model replies a drill plays to an agent: a script (a JSON array of replies in the Messages
 * API's shape, `{ stop_reason, content }`), or the replies a stored run received. Checked against
 * the agent before anything runs: a reply the runtime would refuse, or a call of a tool the agent
 * does not have, is refused here with where it is.
 */
import type { ContentBlock, Message, ModelReply } from '../../machines/agent-loop.types.ts';
import type { AgentDefinition } from '../agent/agent-definition.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

export class DrillScriptError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'DrillScriptError';
  constructor(
    readonly source: string,
    readonly problem: string,
  ) {
    super(`The drill's replies (${source}) cannot be played: ${problem}. Nothing was run.`);
  }
}

/** Token figures for a scripted reply that gives none: small and fixed, as the scripted model's. */
const SCRIPTED_USAGE = { input: 100, output: 50, cacheRead: 0, cacheWrite: 0 };

/** The replies of a script, checked; `source` says where they came from, for the refusals. */
export function scriptReplies(value: unknown, source: string): ModelReply[] {
  if (!Array.isArray(value) || value.length === 0) throw new DrillScriptError(source, 'it must be a non-empty JSON array of replies ({ "stop_reason": …, "content": [ … ] })');
  return value.map((reply, at) => {
    const where = `reply ${at + 1}`;
    if (typeof reply !== 'object' || reply === null) throw new DrillScriptError(source, `${where} is not an object`);
    const { stop_reason: stopReason, content, usage } = reply as Record<string, unknown>;
    if (typeof stopReason !== 'string') throw new DrillScriptError(source, `${where} has no stop_reason (end_turn, tool_use, …)`);
    if (!Array.isArray(content)) throw new DrillScriptError(source, `${where} has no content array`);
    return { stop_reason: stopReason, content: content as ContentBlock[], usage: usageOf(usage) };
  });
}

function usageOf(usage: unknown): ModelReply['usage'] {
  if (typeof usage !== 'object' || usage === null) return SCRIPTED_USAGE;
  const given = usage as Record<string, unknown>;
  const figure = (value: unknown) => (Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : 0);
  return { input: figure(given['input_tokens'] ?? given['input']), output: figure(given['output_tokens'] ?? given['output']), cacheRead: 0, cacheWrite: 0 };
}

/** The replies a run received, in order: its assistant messages (what compaction summarised is not among them). */
export function recordedReplies(messages: readonly Message[], source: string): ModelReply[] {
  const replies = messages
    .filter((message) => message.role === 'assistant')
    .map((message): ModelReply => {
      const content = typeof message.content === 'string' ? [{ type: 'text', text: message.content } as ContentBlock] : (message.content as ContentBlock[]);
      return { content, stop_reason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn', usage: SCRIPTED_USAGE };
    });
  if (replies.length === 0) throw new DrillScriptError(source, 'the run holds no reply of the model');
  return replies;
}

/** Every call of the replies names a tool of the agent, and each call id is used once. */
export function checkRepliesFit(replies: readonly ModelReply[], agent: AgentDefinition, source: string): void {
  const names = new Set(agent.tools.map((tool) => tool.name));
  const ids = new Set<string>();
  replies.forEach((reply, at) => {
    for (const block of reply.content) {
      if (block.type !== 'tool_use') continue;
      const name = String(block.name);
      const id = String(block.id);
      if (!names.has(name)) throw new DrillScriptError(source, `reply ${at + 1} calls ${name}, which the agent ${agent.name} does not have (its tools: ${[...names].join(', ') || 'none'})`);
      if (ids.has(id)) throw new DrillScriptError(source, `reply ${at + 1} uses the call id ${id} again`);
      ids.add(id);
    }
  });
}
