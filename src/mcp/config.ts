/**
 * The `.mcp.json` shape, read and checked: `{"mcpServers": {"<name>": {…}}}` with stdio servers
 * (`command`, `args`, `env`, `cwd`) and Streamable HTTP servers (`"type": "http"`, `url`,
 * `headers`), as other MCP clients write it. `${VAR}` and `${VAR:-default}` in strings are taken
 * from the environment, so that a secret need not stand in the file. One durable-agent key per
 * server, `reconcile`, overrides a tool's hints and names its verify tool (see the README).
 */
import fs from 'node:fs';
import path from 'node:path';
import { McpConfigFieldError, McpConfigSyntaxError, McpConfigUnreadableError } from './errors.ts';
import { addSecrets } from '../util/redact.ts';

/** How a resume may treat a call of one tool whose result was not recorded, overriding the server's hints. */
export interface McpToolOverride {
  readOnlyHint?: boolean;
  idempotentHint?: boolean;
  /**
   * Another tool of the same server, read-only, that answers whether a call's effect happened:
   * called with the same input (and the call's idempotency key in `_meta`), it returns
   * structuredContent `{"happened": true|false}`. Anything else means it cannot tell.
   */
  verify?: string;
}

interface McpServerCommon {
  /** By the tool's name on the server. */
  reconcile?: Record<string, McpToolOverride>;
}

export interface McpStdioServer extends McpServerCommon {
  type?: 'stdio';
  command: string;
  args?: string[];
  /** Added to a minimal inherited environment (HOME, PATH, SHELL, TERM, USER, LOGNAME). Secret: never logged or journaled. */
  env?: Record<string, string>;
  /** Relative to the config file's directory. */
  cwd?: string;
}

export interface McpHttpServer extends McpServerCommon {
  type: 'http';
  url: string;
  /** Secret: never logged or journaled. */
  headers?: Record<string, string>;
}

export type McpServerConfig = McpStdioServer | McpHttpServer;

export interface McpConfig {
  mcpServers: Record<string, McpServerConfig>;
}

/** A config with where it came from, for the messages. */
export interface SourcedMcpConfig {
  source: string;
  config: McpConfig;
}

const SERVER_NAME = /^[A-Za-z0-9_-]{1,40}$/;
const HINTS = ['readOnlyHint', 'idempotentHint'] as const;

export function readMcpConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): SourcedMcpConfig {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new McpConfigUnreadableError(file, (error as NodeJS.ErrnoException).code ?? (error as Error).message);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new McpConfigSyntaxError(file, (error as Error).message);
  }
  return { source: file, config: checkMcpConfig(raw, file, env, path.dirname(path.resolve(file))) };
}

/** The config checked, `${VAR}` expanded and cwd made absolute; McpConfigFieldError names the first bad field. */
export function checkMcpConfig(raw: unknown, source: string, env: NodeJS.ProcessEnv = process.env, baseDir = process.cwd()): McpConfig {
  const check = new Checker(source, env);
  const root = check.object(raw, '(the top level)');
  const servers = check.object(root.mcpServers, 'mcpServers', 'is missing: the file must hold {"mcpServers": {"name": {…}}}');
  const out: Record<string, McpServerConfig> = {};
  for (const [name, entry] of Object.entries(servers)) {
    const at = `mcpServers.${name}`;
    if (!SERVER_NAME.test(name)) {
      throw new McpConfigFieldError(source, at, 'has a name that cannot be part of a tool name: use 1 to 40 letters, digits, "_" or "-"');
    }
    const server = check.object(entry, at);
    const type = server.type ?? (server.url !== undefined ? 'http' : 'stdio');
    const reconcile = check.overrides(server.reconcile, `${at}.reconcile`);
    const common = reconcile ? { reconcile } : {};
    if (type === 'http') {
      const url = check.string(server.url, `${at}.url`);
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw new McpConfigFieldError(source, `${at}.url`, 'is not a URL');
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new McpConfigFieldError(source, `${at}.url`, 'must be an http: or https: URL');
      const headers = check.strings(server.headers, `${at}.headers`);
      // What the server is given to authenticate never reaches a journal, a page or a trace.
      addSecrets([...Object.values(headers ?? {}), decodeURIComponent(parsed.password), decodeURIComponent(parsed.username)]);
      out[name] = { type: 'http', url, ...(headers ? { headers } : {}), ...common };
    } else if (type === 'stdio') {
      const command = check.string(server.command, `${at}.command`);
      const args = server.args === undefined ? undefined : check.list(server.args, `${at}.args`);
      const envVars = check.strings(server.env, `${at}.env`);
      addSecrets(Object.values(envVars ?? {}));
      const cwd = server.cwd === undefined ? undefined : path.resolve(baseDir, check.string(server.cwd, `${at}.cwd`));
      out[name] = { command, ...(args ? { args } : {}), ...(envVars ? { env: envVars } : {}), ...(cwd ? { cwd } : {}), ...common };
    } else {
      const hint = type === 'sse' ? ': the SSE transport is deprecated and not supported; use "http" (Streamable HTTP)' : ': use "stdio" or "http"';
      throw new McpConfigFieldError(source, `${at}.type`, `is ${JSON.stringify(type)}${hint}`);
    }
  }
  return { mcpServers: out };
}

class Checker {
  constructor(
    private readonly source: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  object(value: unknown, field: string, missing = 'is missing'): Record<string, unknown> {
    if (value === undefined) throw new McpConfigFieldError(this.source, field, missing);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new McpConfigFieldError(this.source, field, `must be an object (it is ${kindOf(value)})`);
    return value as Record<string, unknown>;
  }

  string(value: unknown, field: string): string {
    if (value === undefined) throw new McpConfigFieldError(this.source, field, 'is missing');
    if (typeof value !== 'string' || value === '') throw new McpConfigFieldError(this.source, field, `must be a non-empty string (it is ${kindOf(value)})`);
    return this.expand(value, field);
  }

  list(value: unknown, field: string): string[] {
    if (!Array.isArray(value)) throw new McpConfigFieldError(this.source, field, `must be an array of strings (it is ${kindOf(value)})`);
    return value.map((item, index) => {
      if (typeof item !== 'string') throw new McpConfigFieldError(this.source, `${field}[${index}]`, `must be a string (it is ${kindOf(item)})`);
      return this.expand(item, `${field}[${index}]`);
    });
  }

  strings(value: unknown, field: string): Record<string, string> | undefined {
    if (value === undefined) return undefined;
    const object = this.object(value, field);
    const out: Record<string, string> = {};
    for (const [key, item] of Object.entries(object)) {
      // The value is a secret: the message names the field, never the value.
      if (typeof item !== 'string') throw new McpConfigFieldError(this.source, `${field}.${key}`, `must be a string (it is ${kindOf(item)})`);
      out[key] = this.expand(item, `${field}.${key}`);
    }
    return out;
  }

  overrides(value: unknown, field: string): Record<string, McpToolOverride> | undefined {
    if (value === undefined) return undefined;
    const out: Record<string, McpToolOverride> = {};
    for (const [tool, entry] of Object.entries(this.object(value, field))) {
      const at = `${field}.${tool}`;
      const override = this.object(entry, at);
      const checked: McpToolOverride = {};
      for (const [key, item] of Object.entries(override)) {
        if ((HINTS as readonly string[]).includes(key)) {
          if (typeof item !== 'boolean') throw new McpConfigFieldError(this.source, `${at}.${key}`, `must be true or false (it is ${kindOf(item)})`);
          checked[key as (typeof HINTS)[number]] = item;
        } else if (key === 'verify') {
          checked.verify = this.string(item, `${at}.verify`);
        } else {
          throw new McpConfigFieldError(this.source, `${at}.${key}`, 'is not a reconcile setting: use readOnlyHint, idempotentHint or verify');
        }
      }
      out[tool] = checked;
    }
    return out;
  }

  /** `${VAR}` and `${VAR:-default}` from the environment; a variable that is not set is refused. */
  private expand(value: string, field: string): string {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, name: string, fallback: string | undefined) => {
      const found = this.env[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      throw new McpConfigFieldError(this.source, field, `uses \${${name}}, which is not set in the environment (set it, or write \${${name}:-default})`);
    });
  }
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Every value of the config that is a secret (env values, header values, the URL's query and password), to redact. */
export function secretsOf(config: McpConfig): string[] {
  const secrets: string[] = [];
  for (const server of Object.values(config.mcpServers)) {
    if (server.type === 'http') {
      secrets.push(...Object.values(server.headers ?? {}));
      const url = new URL(server.url);
      if (url.password) secrets.push(url.password, decodeURIComponent(url.password));
      for (const value of url.searchParams.values()) secrets.push(value);
    } else {
      secrets.push(...Object.values(server.env ?? {}));
    }
  }
  return secrets.filter((secret) => secret.length > 0);
}
