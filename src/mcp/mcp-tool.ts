/**
 * One tool of an MCP server as one of our tools, `mcp__<server>__<tool>`: its traits for the
 * reconcile come from the server's annotations (readOnlyHint, idempotentHint; MCP's defaults
 * assume the worst), overridden by the config, with where each came from. A call carries its
 * idempotency key in `_meta`. A call lost with the connection is settled at once by the same
 * rules a resume applies to a call whose result was not recorded.
 */
import { defineTool, type ToolContext, type ToolDefinition, type TraitSources, type VerifyAnswer } from '../tools/tool.ts';
import { contentOfResult } from './call-result.ts';
import type { McpToolOverride } from './config.ts';
import { type CallAnswer, IDEMPOTENCY_META_KEY, type ListedTool, type McpConnection, sameContract } from './connection.ts';

export const MCP_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}


export interface McpToolTraits {
  readOnly: boolean;
  idempotent: boolean;
  sources: TraitSources;
}

/** Traits from the config's override, else the server's hint, else MCP's default (false). */
export function traitsOf(server: string, listed: ListedTool, override: McpToolOverride | undefined): McpToolTraits {
  const at = `mcpServers.${server}.reconcile.${listed.name}`;
  const trait = (hint: 'readOnlyHint' | 'idempotentHint'): [boolean, string] => {
    if (override?.[hint] !== undefined) return [override[hint], `${hint}: ${override[hint]} set in the MCP config (${at})`];
    const given = listed.annotations[hint];
    if (given !== undefined) return [given, `${hint}: ${given} from MCP server "${server}"`];
    return [false, `no ${hint} from MCP server "${server}" (MCP assumes false)`];
  };
  const [readOnly, readOnlySource] = trait('readOnlyHint');
  const [idempotent, idempotentSource] = trait('idempotentHint');
  const sources: TraitSources = { readOnly: readOnlySource, idempotent: idempotentSource };
  if (override?.verify) sources.verify = `verify tool ${override.verify} named in the MCP config (${at})`;
  // MCP: idempotentHint means something only for a tool that is not read-only.
  return { readOnly, idempotent: !readOnly && idempotent, sources };
}

export function mcpToolDefinition(connection: McpConnection, listed: ListedTool, override: McpToolOverride | undefined): ToolDefinition {
  const server = connection.name;
  const name = mcpToolName(server, listed.name);
  const traits = traitsOf(server, listed, override);
  const verifyTool = override?.verify;

  const send = (toolName: string, input: unknown, context: ToolContext): Promise<CallAnswer> =>
    connection.call(toolName, input, { [IDEMPOTENCY_META_KEY]: context.idempotencyKey }, context.signal);

  /** Refuses a call to a tool the server no longer offers as it was pinned: never a different contract. */
  const assertSameContract = (toolName: string, pinned: ListedTool | undefined) => {
    const now = connection.tools.find((tool) => tool.name === toolName);
    if (!now) throw new Error(`MCP server "${server}" no longer offers the tool ${toolName}; it was not called.`);
    if (pinned && !sameContract(pinned, now)) {
      throw new Error(`MCP server "${server}" changed the tool ${toolName} (its input schema or annotations) since this process started; it was not called with a different contract.`);
    }
  };

  const verifyWith = async (input: unknown, context: ToolContext): Promise<VerifyAnswer | undefined> => {
    if (!verifyTool) return undefined;
    assertSameContract(verifyTool, undefined);
    const answer = await send(verifyTool, input, context);
    if (answer.kind !== 'answered' || answer.result.isError) return undefined;
    const happened = (answer.result.structuredContent as { happened?: unknown } | undefined)?.happened;
    return typeof happened === 'boolean' ? { happened } : undefined;
  };

  const settleLost = async (input: unknown, context: ToolContext, lost: string): Promise<unknown> => {
    const unknown = (because: string) =>
      new Error(
        `The state of this ${name} call is unknown: ${why}, and ${because}. It was not sent again, so as not to repeat its ` +
          'side effect. Check whether it took effect before calling it again.',
      );
    const why = `MCP server "${server}" disconnected while the call ran (${lost})`;
    const again = async (rule: string) => {
      const answer = await send(listed.name, input, context);
      if (answer.kind === 'answered') return contentOfResult(answer.result);
      throw new Error(`${why}; ${rule}, it was sent again once, and that failed too (${answer.message}). Call it again later.`);
    };
    if (traits.readOnly) return again('read-only');
    if (traits.idempotent) return again('idempotent');
    if (verifyTool) {
      const verdict = await verifyWith(input, context).catch(() => undefined);
      if (verdict?.happened) return `${name} took effect before the server disconnected (confirmed by ${verifyTool}); it was not run again.`;
      if (verdict && !verdict.happened) return again(`verified as not done by ${verifyTool}`);
      throw unknown(`${verifyTool} could not tell whether it took effect`);
    }
    throw unknown('the tool is neither read-only nor idempotent and has no verify tool');
  };

  return defineTool({
    name,
    description: listed.description,
    inputSchema: listed.inputSchema,
    readOnly: traits.readOnly,
    idempotent: traits.idempotent,
    annotations: listed.annotations,
    traitSources: traits.sources,
    async run(input, context) {
      assertSameContract(listed.name, listed);
      const answer = await send(listed.name, input, context);
      switch (answer.kind) {
        case 'answered':
          return contentOfResult(answer.result);
        case 'refused':
          throw new Error(`MCP server "${server}" answered the call with an error: ${answer.message}`);
        case 'not-delivered':
          throw new Error(`MCP server "${server}" could not be reached, so the call was not made (${answer.message}). Try it again later.`);
        case 'lost':
          return settleLost(input, context, answer.message);
      }
    },
    ...(verifyTool ? { verify: verifyWith } : {}),
  });
}
