/** `durable-agent serve`: its options and their parse. */
import { UsageError } from '../usage-error.ts';
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { agentsModule } from '../options/agents.ts';
import { databaseUrl } from '../options/target.ts';

export interface ServeArgs {
  command: 'serve';
  /** The directory whose runs by id are served and driven; null with a fleet (--database-url, or DURABLE_AGENT_DATABASE_URL). */
  dir: string | null;
  databaseUrl: string | null;
  /** The module of agents a folder's runs are started with. */
  agents: string | null;
  host: string | null;
  port: number;
  corsOrigins: string[];
  /** The tokens of durable-agent token add, beside (or instead of) DURABLE_AGENT_API_TOKEN's. */
  tokensFile: string | null;
}

export const DEFAULT_SERVE_PORT = 7430;

export const serveSpec = command({
  name: 'serve',
  words: [],
  summary: 'an HTTP API to start runs, follow their events live (SSE) and approve, answer, signal, cancel',
  description:
    'Serves the HTTP API of docs/serve.md on 127.0.0.1: POST /v1/runs starts a run of an agent (idempotent by its id or\n' +
    'an Idempotency-Key), GET /v1/runs/ID/events streams its events with reconnect by Last-Event-ID, and the\n' +
    "decisions, answers, signals, cancel and pause go to the run's inboxes; GET /v1/openapi.json describes it.\n" +
    'Over a directory (--dir) serve drives the runs itself with the agents of --agents FILE, and takes up its\n' +
    'unfinished runs when it starts; over a fleet (--database-url) the workers drive them.\n' +
    'Every request needs Authorization: Bearer NAME:SECRET, the token of DURABLE_AGENT_API_TOKEN=NAME:SECRET in the\n' +
    'environment (NAME is who the journal records as deciding), or one of --tokens-file FILE (durable-agent token\n' +
    'add: each reads, or reads and steers, every tenant\'s runs or one tenant\'s). Never on the command line.',
  options: [
    option({ key: 'dir', type: 'string', value: 'DIR', help: 'the directory whose runs by id are served, and driven here', defaultText: 'the current directory, unless DURABLE_AGENT_DATABASE_URL is set' }),
    databaseUrl,
    { ...agentsModule, help: 'the module of agent definitions a run of the directory is started with (POST /v1/runs names one)' },
    option({ key: 'port', type: 'integer', value: 'N', help: 'the port to listen on (0: any free port)', min: 0, max: 65535, default: DEFAULT_SERVE_PORT }),
    option({ key: 'host', type: 'string', value: 'HOST', help: 'the address to listen on', defaultText: '127.0.0.1' }),
    option({ key: 'tokensFile', type: 'string', value: 'FILE', help: 'the tokens of durable-agent token add, each with its role and tenant, beside the environment\'s' }),
    option({ key: 'corsOrigin', type: 'string', value: 'URL', help: 'the origins a browser page may call the API from, separated by ","', defaultText: 'none' }),
  ],
  secretFlags: { token: 'give the token in the environment: DURABLE_AGENT_API_TOKEN=NAME:SECRET.' },
  examples: [
    'DURABLE_AGENT_API_TOKEN=ana:$(openssl rand -hex 24) durable-agent serve --dir my-project --agents agents.mjs',
    'durable-agent serve --database-url postgresql://user@db-host/agents --cors-origin https://app.example.com',
  ],
  parse: (values): ServeArgs => {
    const dir = values.dir ?? null;
    const url = values.databaseUrl ?? null;
    if (dir !== null && url !== null) throw new UsageError('serve serves one of --dir DIR (a folder of runs it drives) or --database-url URL (a fleet), not both.');
    if (values.agents !== undefined && dir === null) throw new UsageError('--agents is for --dir: over a fleet the workers have the agents (durable-agent worker --agents FILE).');
    const corsOrigins = (values.corsOrigin ?? '').split(',').map((origin) => origin.trim()).filter((origin) => origin !== '');
    for (const origin of corsOrigins) {
      if (!/^https?:\/\/[^/\s]+$/.test(origin)) throw new UsageError(`--cors-origin ${origin} is not an origin: give scheme, host and port only, e.g. https://app.example.com.`);
    }
    return { command: 'serve', dir, databaseUrl: url, agents: values.agents ?? null, host: values.host ?? null, port: values.port, corsOrigins, tokensFile: values.tokensFile ?? null };
  },
});
