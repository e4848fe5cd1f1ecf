/**
 * What can be wrong with MCP tools before a run starts: the config file, the SDK, a server that
 * does not start, a verify tool the server does not offer. Each is a refusal (exit 2 from the
 * CLI): nothing was started. No SDK types here, so that the CLI can name them cheaply.
 */
import { DurableAgentError, type ErrorKind, OptionalDependencyMissingError } from '../util/durable-agent-error.ts';

/** The config file cannot be read. */
export class McpConfigUnreadableError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'McpConfigUnreadableError';
  constructor(
    readonly file: string,
    readonly code: string,
  ) {
    super(`--mcp-config ${file}: the file cannot be read (${code}). Give the path of an .mcp.json file; nothing was started.`);
  }
}

/** The config file is not JSON. */
export class McpConfigSyntaxError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'McpConfigSyntaxError';
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`${file} is not valid JSON (${problem}). Fix the file (the shape is {"mcpServers": {"name": {…}}}); nothing was started.`);
  }
}

/** One field of the config has the wrong shape or value: the file and the field are named. */
export class McpConfigFieldError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'McpConfigFieldError';
  constructor(
    readonly file: string,
    /** Where in the file, e.g. `mcpServers.fs.args[2]`. */
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${file}: ${field} ${problem}. Fix it and run again; nothing was started.`);
  }
}

/** The MCP SDK, an optional peer dependency, is not installed. */
export class McpSdkMissingError extends OptionalDependencyMissingError {
  override readonly name = 'McpSdkMissingError';
  constructor(cause: unknown) {
    super(
      '@modelcontextprotocol/sdk',
      'MCP tools need "@modelcontextprotocol/sdk", an optional peer dependency that is not installed: ' +
        'install it next to durable-agent (npm install @modelcontextprotocol/sdk) and run again.',
      { cause },
    );
  }
}

/** A server could not be started or reached, or did not list its tools, when the run began. */
export class McpServerStartError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'McpServerStartError';
  constructor(
    readonly server: string,
    readonly why: string,
  ) {
    super(`MCP server "${server}" could not be used: ${why}. Check its entry in the MCP config (and that it starts by hand); nothing was started.`);
  }
}

/** The config names a verify tool that cannot serve as one. */
export class McpVerifyToolError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'McpVerifyToolError';
  constructor(
    readonly file: string,
    readonly server: string,
    readonly tool: string,
    readonly verifyTool: string,
    readonly problem: string,
  ) {
    super(
      `${file}: mcpServers.${server}.reconcile.${tool}.verify names "${verifyTool}", which ${problem}. ` +
        'A verify tool must be a read-only tool of the same server (readOnlyHint, or an override); nothing was started.',
    );
  }
}
