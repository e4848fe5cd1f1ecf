/**
 * The fake Messages API's part for the Anthropic-defined client tools (text editor, memory,
 * bash): it refuses their definitions as the API would (a type it does not know, a name that is
 * not the type's, a description or input_schema beside a type, an option the type has not), and
 * emulates a model that calls them: each step of a plan is one tool_use of an offered tool, and
 * the reply after the last step ends the turn, quoting the last result it was sent. Use it as the
 * responder of a FakeAnthropic (test/helpers/fake-anthropic.ts).
 */
import type { ContentBlock, ModelReply } from '../../machines/agent-loop.types.ts';
import { assistantTurns, type FakeAnswer, type ReceivedRequest, type Responder } from './fake-anthropic.ts';

/** The client tools the fake knows, by type: the name the API requires and the options it accepts. */
const CLIENT_TOOL_TYPES: Record<string, { name: string; options: readonly string[] }> = {
  text_editor_20250728: { name: 'str_replace_based_edit_tool', options: ['max_characters'] },
  text_editor_20250429: { name: 'str_replace_based_edit_tool', options: [] },
  text_editor_20250124: { name: 'str_replace_editor', options: [] },
  memory_20250818: { name: 'memory', options: [] },
  bash_20250124: { name: 'bash', options: [] },
};
/** Fields any tool may carry. */
const COMMON_FIELDS = ['type', 'name', 'cache_control', 'defer_loading', 'strict', 'allowed_callers', 'input_examples'];

/** A tool as the request lists it, whichever kind. */
export type SentTool = { type?: string; name: string; [field: string]: unknown };

export const toolsOf = (request: ReceivedRequest): SentTool[] => (request.body.tools ?? []) as unknown as SentTool[];

/** What the API would answer to the client tools of this request (null: they are fine). */
export function clientToolProblem(request: ReceivedRequest): string | null {
  const tools = toolsOf(request);
  for (const [i, tool] of tools.entries()) {
    if (tool.type === undefined || tool.type === 'custom') continue;
    const known = CLIENT_TOOL_TYPES[tool.type];
    // Server tools (web search, code execution…) are another part's to check.
    if (!known) {
      if (/^(text_editor|memory|bash)_/.test(tool.type)) return `tools.${i}: Input tag '${tool.type}' found using 'type' does not match any of the expected tags`;
      continue;
    }
    if (tool.name !== known.name) return `tools.${i}.${tool.type}.name: Input should be '${known.name}'`;
    for (const field of Object.keys(tool)) {
      if (!COMMON_FIELDS.includes(field) && !known.options.includes(field)) return `tools.${i}.${tool.type}.${field}: Extra inputs are not permitted`;
    }
    const max = tool.max_characters;
    if (max !== undefined && max !== null && !(Number.isInteger(max) && (max as number) >= 1)) return `tools.${i}.${tool.type}.max_characters: Input should be greater than or equal to 1`;
  }
  const names = tools.map((tool) => tool.name);
  const twice = names.find((name, at) => names.indexOf(name) !== at);
  return twice === undefined ? null : `tools: Tool names must be unique (${twice})`;
}

/** One call the emulated model makes. */
export interface PlannedCall {
  name: string;
  input: Record<string, unknown>;
}

/** The tool_result blocks the emulated model was sent, in the order it got them (a resent one once). */
export interface ClientToolsModel {
  responder: Responder;
  results: () => ContentBlock[];
}

/**
 * A model that works through `plan`, one call a reply: reply n (the n-th assistant turn) calls
 * plan[n] with id toolu_<n+1>, and once the plan is done it ends the turn quoting the last
 * result. It refuses (400) a request whose client tools the API would refuse, or that does not
 * offer the tool the plan calls next.
 */
export function clientToolsModel(plan: readonly PlannedCall[], finalText = 'Done.'): ClientToolsModel {
  const seen = new Map<string, ContentBlock>();
  const usage = { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 };
  const responder = (request: ReceivedRequest): FakeAnswer => {
    const problem = clientToolProblem(request);
    if (problem) return { status: 400, errorType: 'invalid_request_error', message: problem };
    for (const message of request.body.messages) {
      if (typeof message.content === 'string') continue;
      for (const block of message.content) if (block.type === 'tool_result' && !seen.has(String(block.tool_use_id))) seen.set(String(block.tool_use_id), block);
    }
    const turn = assistantTurns(request);
    const call = plan[turn];
    if (!call) {
      const last = [...seen.values()].at(-1);
      const quoted = last === undefined ? '' : ` The last result: ${typeof last.content === 'string' ? last.content : JSON.stringify(last.content)}`;
      const reply: ModelReply = { content: [{ type: 'text', text: `${finalText}${quoted}` }], stop_reason: 'end_turn', usage };
      return { reply };
    }
    if (!toolsOf(request).some((tool) => tool.name === call.name)) {
      return { status: 400, errorType: 'invalid_request_error', message: `the plan calls ${call.name}, which this request does not offer` };
    }
    const reply: ModelReply = { content: [{ type: 'tool_use', id: `toolu_${turn + 1}`, name: call.name, input: call.input }], stop_reason: 'tool_use', usage };
    return { reply };
  };
  return { responder, results: () => [...seen.values()] };
}
