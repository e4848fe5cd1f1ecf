/**
 * `durable-agent serve`: the HTTP API until Ctrl-C. Its server, routing and schema libraries load
 * only here (and pg only for a fleet): no other command pays for them.
 */
import path from 'node:path';
import type { ServeArgs } from '../args.ts';
import { loadAgents } from '../agents-module.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';
import { runDirOf } from '../run-dir.ts';

export async function serveCommand(args: ServeArgs, env: NodeJS.ProcessEnv, writers: Writers, stopped: Promise<unknown> = interrupted(), cwd = process.cwd()): Promise<number> {
  const url = args.dir === null ? (args.databaseUrl ?? (args.agents === null ? env.DURABLE_AGENT_DATABASE_URL : undefined) ?? null) : null;
  // Neither given: the fleet of DURABLE_AGENT_DATABASE_URL, else the current directory.
  const dir = url !== null ? null : runDirOf(args.dir ?? cwd);
  // Loaded before anything listens: a module refused starts nothing.
  const agents = args.agents === null ? [] : await loadAgents(args.agents, cwd);
  const { createServer } = await import('../../serve/create-server.ts');
  const running = await createServer({
    ...(dir !== null ? { dir, agents, ...(args.agents !== null ? { agentsModule: path.resolve(cwd, args.agents) } : {}) } : { databaseUrl: url! }),
    host: args.host ?? undefined,
    port: args.port,
    corsOrigins: args.corsOrigins,
    ...(args.tokensFile !== null ? { tokensFile: path.resolve(cwd, args.tokensFile) } : {}),
    env,
    notice: (line) => writers.out(line),
  });
  writers.out(`[serve] ${running.url} (the API: ${running.url}/v1/openapi.json)`);
  const what = dir !== null ? `the runs of ${dir}${agents.length ? `, started with ${agents.map((agent) => agent.name).join(', ')}` : ' (read and steered: no --agents, so none is started)'}` : 'the runs of the fleet';
  writers.out(`[serve] ${what}${running.resumed.length ? `; took up ${running.resumed.join(', ')}` : ''}. Ctrl-C stops it.`);
  await stopped;
  await running.close();
  writers.out('[serve] stopped');
  return EXIT.done;
}

function interrupted(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}
