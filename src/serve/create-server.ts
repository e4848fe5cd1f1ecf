/**
 * `durable-agent serve` as a program starts it: the HTTP API over a folder of runs (which it
 * drives with the agents given) or a fleet's database (whose workers drive them), on Node's HTTP
 * server, listening on 127.0.0.1 unless told otherwise. pg is loaded only for a fleet.
 */
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { environmentKeys } from '../seal/environment-keys.ts';
import type { KeysGiven } from '../seal/keys.ts';
import { serve } from '@hono/node-server';
import type { TokenCheck } from '../access/caller.ts';
import { AnyTokenCheck, FileTokenCheck, namedTokenCheck } from '../access/token-checks.ts';
import type { AgentDefinition } from '../agent/agent-definition.ts';
import type { Database } from '../store/pg/pool.ts';
import { stateFolderOf } from '../store/open-store.ts';
import { packageVersion } from '../util/package-version.ts';
import { FolderPlace } from './folder-place.ts';
import type { RunPlace } from './run-place.ts';
import { serveApp } from './serve-app.ts';
import { ServePlaceError } from './serve-errors.ts';

export interface ServerOptions {
  /** A directory: the API serves the runs by id of its state folder (DIR/.durable-agent) and drives them itself. */
  dir?: string | undefined;
  /** The agents a folder's runs are started with (the module `--agents` names): POST /v1/runs names one. */
  agents?: readonly AgentDefinition[] | undefined;
  /** The module the agents came from, kept in each run's header as `run --agents` keeps it. */
  agentsModule?: string | undefined;
  /** A fleet: its database URL (or `pool`): runs are submitted to it and its workers drive them. */
  databaseUrl?: string | undefined;
  pool?: Database | undefined;
  /**
   * Who may call the API: your own check of a bearer token. Default: the one token of
   * DURABLE_AGENT_API_TOKEN (NAME:SECRET, steers every tenant's runs) and the tokens of `tokensFile`.
   */
  tokens?: TokenCheck | undefined;
  /** A tokens file (`durable-agent token add`): tokens that read or steer, each of every tenant or of one. */
  tokensFile?: string | undefined;
  /** Default 127.0.0.1. */
  host?: string | undefined;
  /** Default 7430; 0: any free port. */
  port?: number | undefined;
  /** The origins a browser page may call the API from; default none. */
  corsOrigins?: readonly string[] | undefined;
  /** Values that never leave in an answer, besides the API keys of the environment and the token. */
  secrets?: readonly string[] | undefined;
  /** How often a quiet event stream says it is still there (default 15 s). */
  heartbeatMs?: number | undefined;
  /** Over a folder: take up the runs serve started that are unfinished and wait for no person (default true). */
  resumeRuns?: boolean | undefined;
  /** A line of what serve does (a run taken up, a run that stopped with an error); default none. */
  notice?: ((line: string) => void) | undefined;
  /** Default process.env: where the token and the keys to keep out of answers are read. */
  env?: NodeJS.ProcessEnv | undefined;
  /**
   * The master keys (or a function that reads them when first needed): the runs started here are
   * sealed with them, and sealed runs read with them. Default: the environment's
   * (DURABLE_AGENT_KEYS or DURABLE_AGENT_KEY_FILE); none there, runs are started plain.
   */
  keys?: KeysGiven | undefined;
}

export interface RunningServer {
  /** http://HOST:PORT */
  url: string;
  port: number;
  /** Over a folder: the runs taken up at the start. */
  resumed: string[];
  close(): Promise<void>;
}

export const DEFAULT_SERVE_PORT = 7430;
/** The environment variable of serve's one token of every tenant. */
export const API_TOKEN_ENV = 'DURABLE_AGENT_API_TOKEN';
export const DEFAULT_SERVE_HOST = '127.0.0.1';

export async function createServer(options: ServerOptions): Promise<RunningServer> {
  const env = options.env ?? process.env;
  const given = [options.dir !== undefined, options.databaseUrl !== undefined || options.pool !== undefined].filter(Boolean).length;
  if (given !== 1) throw new ServePlaceError('give either a directory (dir, --dir) or a fleet (databaseUrl, --database-url), one of them');
  const notice = options.notice ?? (() => {});
  const keys = options.keys ?? environmentKeys(env);
  const envToken = options.tokens ? undefined : env[API_TOKEN_ENV] || undefined;
  const tokens = options.tokens ?? tokenChecksOf(envToken, options.tokensFile, notice);
  let ownPool: Database | null = null;
  let place: RunPlace;
  let folder: FolderPlace | null = null;
  if (options.dir !== undefined) {
    folder = new FolderPlace({ root: stateFolderOf(path.resolve(options.dir)), agents: options.agents ?? [], agentsModule: options.agentsModule ?? null, notice, keys });
    place = folder;
  } else {
    // Loaded here only: a server of a folder runs without pg installed.
    const pool = options.pool ?? (ownPool = await (await import('../store/pg/pool.ts')).openDatabase(options.databaseUrl!, 8));
    place = new (await import('./fleet-place.ts')).FleetPlace(pool, keys);
  }
  const secrets = [env.ANTHROPIC_API_KEY, env.ANTHROPIC_AUTH_TOKEN, envToken, envToken?.slice(envToken.indexOf(':') + 1), ...(options.secrets ?? [])].filter((value): value is string => Boolean(value));
  const app = serveApp({ place, tokens, corsOrigins: options.corsOrigins, secrets, heartbeatMs: options.heartbeatMs, version: packageVersion() });
  const host = options.host ?? DEFAULT_SERVE_HOST;
  const closePlace = async () => {
    await place.close();
    await ownPool?.end();
  };
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve({ fetch: app.fetch, hostname: host, port: options.port ?? DEFAULT_SERVE_PORT }, () => resolve(started));
    started.once('error', reject);
  }).catch(async (error: unknown) => {
    await closePlace();
    throw error;
  });
  const resumed = folder && options.resumeRuns !== false ? await folder.resumeOwnRuns() : [];
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    port,
    resumed,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Event streams stay open until their client goes: end them so the close does not wait.
        if ('closeAllConnections' in server) server.closeAllConnections();
      });
      await closePlace();
    },
  };
}

/** The environment's token and a tokens file's, as one check; a file refused (open to others, damaged) starts nothing. */
function tokenChecksOf(envToken: string | undefined, tokensFile: string | undefined, notice: (line: string) => void): TokenCheck {
  const checks: TokenCheck[] = [];
  if (envToken !== undefined) checks.push(namedTokenCheck(envToken, API_TOKEN_ENV));
  if (tokensFile !== undefined) checks.push(new FileTokenCheck(tokensFile, (problem) => notice(`[serve] no token of the tokens file is taken until it is right: ${problem.message}`)));
  if (checks.length === 0) {
    throw new ServePlaceError(`no token: set ${API_TOKEN_ENV}=NAME:SECRET in the environment (NAME is who the journal records as deciding), or give a tokens file of durable-agent token add (--tokens-file FILE)`);
  }
  return checks.length === 1 ? checks[0]! : new AnyTokenCheck(...checks);
}
