/**
 * Loads @modelcontextprotocol/sdk, an optional peer dependency, when MCP tools are used: a run
 * without MCP does not pay for it (nor install its express/hono tree), and a missing package
 * is reported by name (McpSdkMissingError) instead of as a module-resolution stack trace.
 */
import { McpSdkMissingError } from './errors.ts';

export interface McpSdk {
  Client: typeof import('@modelcontextprotocol/sdk/client/index.js').Client;
  StdioClientTransport: typeof import('@modelcontextprotocol/sdk/client/stdio.js').StdioClientTransport;
  StreamableHTTPClientTransport: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport;
  McpError: typeof import('@modelcontextprotocol/sdk/types.js').McpError;
  StreamableHTTPError: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPError;
}

let loaded: Promise<McpSdk> | null = null;

export function loadMcpSdk(): Promise<McpSdk> {
  loaded ??= load().catch((error: unknown) => {
    loaded = null;
    throw error;
  });
  return loaded;
}

async function load(): Promise<McpSdk> {
  try {
    const [client, stdio, http, types] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]);
    return {
      Client: client.Client,
      StdioClientTransport: stdio.StdioClientTransport,
      StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
      McpError: types.McpError,
      StreamableHTTPError: http.StreamableHTTPError,
    };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && /@modelcontextprotocol\/sdk/.test((error as Error).message)) {
      throw new McpSdkMissingError(error);
    }
    throw error;
  }
}
