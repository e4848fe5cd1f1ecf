/**
 * One MCP server, connected: starts it (stdio) or opens a session (Streamable HTTP), lists its
 * tools, calls them, and comes back after a crash or a dropped connection with backoff (a stdio
 * server is started again). Every call's fate is classified, because a resume-like decision
 * rests on it: answered (a result, an error result, or a JSON-RPC error: the server spoke),
 * not delivered (it never reached the server: safe to send again), or lost (it was in flight
 * when the connection broke: whether it took effect is unknown).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JsonSchema, ToolAnnotations } from '../tools/tool.ts';
import type { McpServerConfig } from './config.ts';
import type { McpSdk } from './load-sdk.ts';

export interface ListedTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  annotations: ToolAnnotations;
}

/** What a tools/call result holds that we use. */
export interface McpCallResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

export type CallAnswer =
  | { kind: 'answered'; result: McpCallResult }
  | { kind: 'refused'; message: string }
  | { kind: 'not-delivered'; message: string }
  | { kind: 'lost'; message: string };

export interface ConnectionOptions {
  /** A line for the user (stderr): reconnects, tools that changed. Already free of the config's secrets. */
  log: (line: string) => void;
  /** Takes the config's secrets out of text from outside (errors, the server's stderr). */
  redact: (text: string) => string;
  /** The waits before each reconnection attempt, in milliseconds. */
  reconnectDelaysMs: readonly number[];
  version: string;
}

const STDERR_TAIL_LINES = 20;
/** The key of `_meta` that carries a call's idempotency key (stable across crashes and resumes). */
export const IDEMPOTENCY_META_KEY = 'idempotencyKey';
/** Calls end by the tool's own time limit (its AbortSignal); the SDK's 60 s default would cut long tools short. */
const NO_SDK_TIMEOUT_MS = 2_147_483_647;

/** Stdio servers still running, stopped when this process exits in any way but a kill. */
const liveChildren = new Set<Transport & { pid: number | null }>();
let exitHookInstalled = false;

function stopChildrenOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const transport of liveChildren) {
      try {
        if (transport.pid) process.kill(transport.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
  });
}

export class McpConnection {
  private client: Client | null = null;
  private connecting: Promise<Client> | null = null;
  private closed = false;
  private stderrTail: string[] = [];
  /** How sending each tools/call request went, by its idempotency key: delivered, or not sent at all. */
  private readonly sends = new Map<string, Promise<'delivered' | 'not-delivered' | 'lost'>>();
  /** The tools as the server lists them now (refreshed on every reconnection). */
  tools: ListedTool[] = [];

  constructor(
    readonly name: string,
    private readonly server: McpServerConfig,
    private readonly sdk: McpSdk,
    private readonly options: ConnectionOptions,
  ) {}

  /** Connects and lists the tools; throws (the caller refuses the run) when the server cannot be used. */
  async start(): Promise<ListedTool[]> {
    const client = await this.open();
    this.client = client;
    this.tools = await this.list(client);
    return this.tools;
  }

  async call(tool: string, input: unknown, meta: Record<string, unknown>, signal: AbortSignal): Promise<CallAnswer> {
    const key = String(meta[IDEMPOTENCY_META_KEY] ?? '');
    // A call that never reached the server is sent again once the server is back: nothing happened.
    for (let attempt = 0; ; attempt += 1) {
      const client = await this.connected().catch((error: unknown) => error as Error);
      if (client instanceof Error) {
        return { kind: 'not-delivered', message: `the server is not available (${this.describe(client)})` };
      }
      try {
        const args = (input ?? {}) as Record<string, unknown>;
        const result = await client.callTool({ name: tool, arguments: args, _meta: meta }, undefined, { signal, timeout: NO_SDK_TIMEOUT_MS });
        return { kind: 'answered', result: result as McpCallResult };
      } catch (error) {
        if (signal.aborted) throw error;
        let fate = this.fateOf(error);
        // The connection may report itself closed before the send of this very request failed:
        // whether the request left decides between "lost" and "never sent".
        if (fate === 'lost' && (await this.sends.get(key)) === 'not-delivered') fate = 'not-delivered';
        if (fate === 'answered') return { kind: 'refused', message: this.describe(error) };
        this.drop(client);
        if (fate === 'lost') return { kind: 'lost', message: this.describe(error) };
        if (attempt >= 1) return { kind: 'not-delivered', message: this.describe(error) };
      } finally {
        this.sends.delete(key);
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    await client?.close().catch(() => {});
  }

  /** The connection, reconnecting with backoff when it broke. */
  private connected(): Promise<Client> {
    if (this.closed) return Promise.reject(new Error('the MCP tools were closed'));
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.reconnect().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async reconnect(): Promise<Client> {
    let last: unknown;
    for (const [index, delay] of this.options.reconnectDelaysMs.entries()) {
      await new Promise((resolve) => setTimeout(resolve, delay));
      if (this.closed) throw new Error('the MCP tools were closed');
      try {
        const client = await this.open();
        const before = this.tools;
        this.tools = await this.list(client);
        this.client = client;
        this.options.log(`[mcp] server "${this.name}" is back (reconnected on attempt ${index + 1})`);
        this.reportChanges(before, this.tools);
        return client;
      } catch (error) {
        last = error;
      }
    }
    const tries = this.options.reconnectDelaysMs.length;
    this.options.log(`[mcp] server "${this.name}" could not be reconnected after ${tries} attempts: ${this.describe(last)}`);
    throw last instanceof Error ? last : new Error(String(last));
  }

  private reportChanges(before: readonly ListedTool[], now: readonly ListedTool[]): void {
    for (const tool of before) {
      const current = now.find((t) => t.name === tool.name);
      if (!current) this.options.log(`[mcp] server "${this.name}" no longer offers tool ${tool.name}: its calls get an error result`);
      else if (!sameContract(tool, current)) this.options.log(`[mcp] server "${this.name}" changed tool ${tool.name}: its calls get an error result`);
    }
  }

  private async open(): Promise<Client> {
    const client = new this.sdk.Client({ name: 'durable-agent', version: this.options.version }, { capabilities: {} });
    const transport = this.transport();
    client.onclose = () => {
      if (this.client === client) this.client = null;
      liveChildren.delete(transport as Transport & { pid: number | null });
    };
    client.onerror = (error) => {
      // A Streamable HTTP response stream that broke leaves its request waiting forever: closing
      // the transport fails it (as lost), and the next call reconnects.
      if (/SSE stream disconnected|Maximum reconnection attempts/.test(error.message)) {
        if (this.client === client) this.client = null;
        void transport.close().catch(() => {});
      }
    };
    this.watchSends(transport);
    try {
      await client.connect(transport);
    } catch (error) {
      await transport.close().catch(() => {});
      throw new Error(`${this.describe(error)}${this.stderrNote()}`);
    }
    return client;
  }

  private transport(): Transport {
    const { server, sdk } = this;
    if (server.type === 'http') {
      return new sdk.StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: server.headers ?? {} },
        // Our own reconnection decides what a broken call means; the SDK's would retry silently.
        reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
      });
    }
    const transport = new sdk.StdioClientTransport({
      command: server.command,
      args: server.args ?? [],
      ...(server.env ? { env: server.env } : {}),
      ...(server.cwd ? { cwd: server.cwd } : {}),
      // Piped, not inherited: the server's stderr may carry the config's secrets and would tear the live view.
      stderr: 'pipe',
    });
    this.stderrTail = [];
    transport.stderr?.on('data', (chunk: Buffer) => {
      const lines = chunk.toString('utf8').split('\n').filter((line) => line.trim() !== '');
      this.stderrTail = [...this.stderrTail, ...lines].slice(-STDERR_TAIL_LINES);
    });
    liveChildren.add(transport);
    stopChildrenOnExit();
    return transport;
  }

  /** Records, for each tools/call request, whether the transport sent it (see call()). */
  private watchSends(transport: Transport): void {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const params = (message as { method?: string; params?: { _meta?: Record<string, unknown> } }).params;
      const key = (message as { method?: string }).method === 'tools/call' ? params?._meta?.[IDEMPOTENCY_META_KEY] : undefined;
      const sending = send(message, options);
      if (typeof key === 'string') {
        this.sends.set(
          key,
          sending.then(
            () => 'delivered' as const,
            (error: unknown) => (this.fateOf(error) === 'not-delivered' ? 'not-delivered' : 'lost'),
          ),
        );
      }
      return sending;
    };
  }

  private async list(client: Client): Promise<ListedTool[]> {
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: 60_000 });
      for (const tool of page.tools) {
        tools.push({
          name: tool.name,
          description: tool.description ?? tool.title ?? '',
          inputSchema: tool.inputSchema as JsonSchema,
          annotations: booleanHints(tool.annotations),
        });
      }
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  /** Forgets a broken connection (closing it stops a stdio server that still runs); the next call reconnects. */
  private drop(client: Client): void {
    if (this.client === client) this.client = null;
    void client.close().catch(() => {});
    this.options.log(`[mcp] server "${this.name}" disconnected; reconnecting on its next call`);
  }

  private fateOf(error: unknown): 'answered' | 'not-delivered' | 'lost' {
    const { McpError, StreamableHTTPError } = this.sdk;
    if (error instanceof McpError) {
      // -32000 ConnectionClosed, -32001 RequestTimeout: the connection, not the server, ended the call.
      return error.code === -32000 || error.code === -32001 ? 'lost' : 'answered';
    }
    if (error instanceof StreamableHTTPError) {
      // 404: the session is unknown (the server restarted) and the request was not run.
      if (error.code === 404) return 'not-delivered';
      return error.code !== undefined && error.code >= 400 && error.code < 500 ? 'answered' : 'lost';
    }
    const text = `${(error as Error)?.message ?? ''} ${String((error as { cause?: { code?: string } })?.cause?.code ?? '')}`;
    if (/Not connected|ECONNREFUSED/.test(text)) return 'not-delivered';
    return 'lost';
  }

  private describe(error: unknown): string {
    const message = error instanceof Error ? error.message : String(error);
    const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
    const detail = cause?.code ? ` (${cause.code})` : '';
    return this.options.redact(`${message}${detail}`);
  }

  private stderrNote(): string {
    if (!this.stderrTail.length) return '';
    return `; its stderr ended with: ${this.options.redact(this.stderrTail.slice(-5).join(' | '))}`;
  }
}

/** Only the boolean hints of MCP's annotations: they decide; a title or unknown field does not. */
function booleanHints(annotations: Record<string, unknown> | undefined): ToolAnnotations {
  const hints: ToolAnnotations = {};
  for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
    if (typeof annotations?.[key] === 'boolean') hints[key] = annotations[key] as boolean;
  }
  return hints;
}

/** The same input schema and the same hints: a call made to one may be made to the other. */
export function sameContract(a: ListedTool, b: ListedTool): boolean {
  return stableJson(a.inputSchema) === stableJson(b.inputSchema) && stableJson(a.annotations) === stableJson(b.annotations);
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
