/**
 * Starts the console: the routes on Node's HTTP server (through @hono/node-server), listening on
 * loopback unless told otherwise, guarded by a token. With no token given, one is made for this
 * start and printed in the console's address, in the fragment the page keeps and drops. The
 * tokens of a tokens file are taken beside it, each with its role and tenant.
 */
import { randomBytes } from 'node:crypto';
import type { TokenCheck } from '../access/caller.ts';
import { AnyTokenCheck, environmentTokenCheck, FileTokenCheck } from '../access/token-checks.ts';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Database } from '../store/pg/pool.ts';
import { pageStyle } from '../../visualizer/page-assets.ts';
import { consoleApp } from './console-app.ts';
import { consoleScript, consoleStyle } from './page-assets.ts';
import { ConsoleTokenRequiredError } from './console-errors.ts';
import { ConsoleGuard, hostNamesOf, isLoopback } from './console-guard.ts';
import { RunSources, type RunSourcesOptions } from './run-sources.ts';

export interface ConsoleServerOptions {
  /** The state folders (DIR/.durable-agent) whose runs are shown. */
  roots: readonly string[];
  pool?: Database | null | undefined;
  host?: string | undefined;
  /** 0: any free port. */
  port: number;
  /** The token of your choosing ("NAME:SECRET" names who uses it); none: one is made for this start (loopback only). */
  token?: string | null | undefined;
  /** A tokens file (access/tokens-file.ts) whose tokens are taken beside the console's own, read again when it changes. */
  tokensFile?: string | null | undefined;
  /** Who the journal records as deciding with the console's own token; default: the token's name, else `user`. */
  by?: string | null | undefined;
  /** The login name, when neither --by nor the token names anyone. */
  user: string;
  /** Values that must never leave in a response (the environment's API keys). */
  secrets?: readonly string[] | undefined;
  /** A line for the console's output (that some run folders cannot be watched); default: none. */
  notice?: ((line: string) => void) | undefined;
  /** Test-only: what the list's index watches run folders with, and how often it looks at all again. */
  sources?: Pick<RunSourcesOptions, 'watch' | 'sweepMs'> | undefined;
}

export interface RunningConsole {
  /** The address to open, with the token in its fragment. */
  url: string;
  /** The address without the token. */
  origin: string;
  port: number;
  token: string;
  by: string;
  close(): Promise<void>;
}

export const DEFAULT_HOST = '127.0.0.1';

export async function startConsole(options: ConsoleServerOptions): Promise<RunningConsole> {
  const host = options.host ?? DEFAULT_HOST;
  // A tokens file holds tokens of your choosing: a console beyond this machine may be guarded by them alone.
  if (!isLoopback(host) && !options.token && !options.tokensFile) throw new ConsoleTokenRequiredError(host);
  const token = options.token || randomBytes(24).toString('base64url');
  const by = options.by || nameOfToken(options.token) || options.user;
  // The console's own token steers every tenant's runs, as the only token it had always did.
  const own = environmentTokenCheck(token, by);
  // Read now: a tokens file refused starts nothing.
  const tokens: TokenCheck = options.tokensFile
    ? new AnyTokenCheck(own, new FileTokenCheck(options.tokensFile, (problem) => options.notice?.(`[console] no token of the tokens file is taken until it is right: ${problem.message}`)))
    : own;
  let hosts: Set<string> | null = new Set();
  const guard = new ConsoleGuard(tokens, () => hosts);
  const [script, diagramStyle, style] = await Promise.all([consoleScript(), pageStyle(), consoleStyle()]);
  const sources = new RunSources(options.roots, options.pool ?? null, { ...options.sources, notice: options.notice });
  const app = consoleApp({
    sources,
    guard,
    secrets: [...(options.secrets ?? []), token],
    script,
    style: `${diagramStyleOf(diagramStyle)}\n${style}`,
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve({ fetch: app.fetch, hostname: host, port: options.port }, () => resolve(started));
    started.once('error', reject);
  }).catch(async (error: unknown) => {
    await sources.close();
    throw error;
  });
  const port = (server.address() as AddressInfo).port;
  hosts = hostNamesOf(host.includes(':') && !host.startsWith('[') ? `[${host}]` : host, port);
  const shown = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const origin = `http://${shown}:${port}`;
  return {
    url: `${origin}/#token=${encodeURIComponent(token)}`,
    origin,
    port,
    token,
    by,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Live streams stay open until their page goes: end them so the close does not wait for it.
        if ('closeAllConnections' in server) server.closeAllConnections();
      });
      await sources.close();
    },
  };
}

/** "ana:SECRET" names ana; a token without a name names no one. */
function nameOfToken(token: string | null | undefined): string | null {
  const at = token?.indexOf(':') ?? -1;
  return at > 0 ? token!.slice(0, at) : null;
}

/**
 * The visualizer's stylesheet, less its page layout (which the console lays out itself): its
 * colours and everything from the diagram on.
 */
function diagramStyleOf(style: string): string {
  const root = /:root\s*\{[^}]*\}/.exec(style)?.[0] ?? '';
  const from = style.indexOf('/* The diagram */');
  return from === -1 ? style : `${root}\n${style.slice(from)}`;
}
