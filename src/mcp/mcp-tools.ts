/**
 * `mcpTools(config)`: connects to every server of an MCP config, lists their tools and returns
 * them as our tool definitions, with close() (and `await using`) to stop the servers.
 */
import { packageVersion } from '../util/package-version.ts';
import { redactSecrets } from '../util/redact.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { checkMcpConfig, type McpConfig, readMcpConfigFile, secretsOf } from './config.ts';
import { McpConfigFieldError, McpServerStartError, McpVerifyToolError } from './errors.ts';
import { type ListedTool, McpConnection } from './connection.ts';
import { loadMcpSdk } from './load-sdk.ts';
import { MCP_TOOL_NAME, mcpToolDefinition, mcpToolName, traitsOf } from './mcp-tool.ts';

export interface McpToolsOptions {
  /** For `${VAR}` in the config (default process.env). */
  env?: NodeJS.ProcessEnv | undefined;
  /** Lines for the user: reconnections, tools that changed or were left out. Free of the config's secrets. */
  log?: ((line: string) => void) | undefined;
  /** The waits before each reconnection attempt after a server crashed or disconnected (default 250, 1000, 4000 ms). */
  reconnectDelaysMs?: readonly number[] | undefined;
}

export interface McpToolSet {
  /** Every server's tools, `mcp__<server>__<tool>`, in the config's order of servers. */
  readonly tools: ToolDefinition[];
  /** Stops the stdio servers and ends the HTTP sessions. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export const DEFAULT_RECONNECT_DELAYS_MS = [250, 1000, 4000] as const;

/** `config`: the config object, or the path of an .mcp.json file. */
export async function mcpTools(config: McpConfig | string, options: McpToolsOptions = {}): Promise<McpToolSet> {
  const env = options.env ?? process.env;
  const { source, config: checked } =
    typeof config === 'string' ? readMcpConfigFile(config, env) : { source: 'the MCP config', config: checkMcpConfig(config, 'the MCP config', env) };
  const secrets = secretsOf(checked);
  const redact = (text: string) => redactSecrets(text, secrets);
  const log = (line: string) => options.log?.(redact(line));
  const sdk = await loadMcpSdk();
  const connectionOptions = {
    log,
    redact,
    reconnectDelaysMs: options.reconnectDelaysMs ?? DEFAULT_RECONNECT_DELAYS_MS,
    version: packageVersion(import.meta.url),
  };
  const connections = Object.entries(checked.mcpServers).map(([name, server]) => new McpConnection(name, server, sdk, connectionOptions));
  const close = async () => {
    await Promise.all(connections.map((connection) => connection.close()));
  };
  try {
    const listed = await Promise.all(
      connections.map((connection) =>
        connection.start().catch((error: unknown) => {
          throw new McpServerStartError(connection.name, redact(error instanceof Error ? error.message : String(error)));
        }),
      ),
    );
    const tools = connections.flatMap((connection, index) => toolsOf(source, checked, connection, listed[index]!, log));
    return { tools, close, [Symbol.asyncDispose]: close };
  } catch (error) {
    await close();
    throw error;
  }
}

function toolsOf(source: string, config: McpConfig, connection: McpConnection, listed: ListedTool[], log: (line: string) => void): ToolDefinition[] {
  const server = connection.name;
  const overrides = config.mcpServers[server]!.reconcile ?? {};
  const offered = new Map(listed.map((tool) => [tool.name, tool]));
  for (const [tool, override] of Object.entries(overrides)) {
    if (!offered.has(tool)) {
      const names = [...offered.keys()].join(', ') || 'none';
      throw new McpConfigFieldError(source, `mcpServers.${server}.reconcile.${tool}`, `names a tool server "${server}" does not offer (it offers: ${names})`);
    }
    const verify = override.verify;
    if (verify === undefined) continue;
    const verifier = offered.get(verify);
    if (!verifier) throw new McpVerifyToolError(source, server, tool, verify, `server "${server}" does not offer`);
    if (!traitsOf(server, verifier, overrides[verify]).readOnly) throw new McpVerifyToolError(source, server, tool, verify, 'is not read-only');
  }
  const tools: ToolDefinition[] = [];
  for (const tool of listed) {
    const name = mcpToolName(server, tool.name);
    if (!MCP_TOOL_NAME.test(name)) {
      log(`[mcp] server "${server}": tool ${JSON.stringify(tool.name)} is left out: ${name} is not a tool name the model accepts (1 to 64 letters, digits, "_" or "-")`);
      continue;
    }
    tools.push(mcpToolDefinition(connection, tool, overrides[tool.name]));
  }
  return tools;
}
