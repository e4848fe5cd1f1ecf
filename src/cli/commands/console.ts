/**
 * `durable-agent console`: serves the web console until Ctrl-C. Its server and routing library
 * load only here: no other command pays for them.
 */
import type { ConsoleArgs } from '../args.ts';
import { runDirOf } from '../run-dir.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';
import { readSecretFile } from '../secret-file.ts';
import { stateFolderOf } from '../run-store.ts';
import { userName } from '../user-name.ts';

export async function consoleCommand(args: ConsoleArgs, env: NodeJS.ProcessEnv, writers: Writers, stopped: Promise<unknown> = interrupted()): Promise<number> {
  const dirs = args.dirs.map(runDirOf);
  // Read before anything starts: a file refused starts nothing.
  const token = args.tokenFile !== null ? readSecretFile('--token-file', args.tokenFile) : env.DURABLE_AGENT_CONSOLE_TOKEN || null;
  const url = args.databaseUrl ?? env.DURABLE_AGENT_DATABASE_URL ?? null;
  const pool = url ? await (await import('../../store/pg/pool.ts')).openDatabase(url, 4) : null;
  const { startConsole } = await import('../../console/console-server.ts');
  try {
    const running = await startConsole({
      roots: dirs.map((dir) => stateFolderOf(dir)),
      pool,
      host: args.host ?? undefined,
      port: args.port,
      token,
      tokensFile: args.tokensFile,
      by: args.by,
      user: userName(),
      secrets: [env.ANTHROPIC_API_KEY, env.ANTHROPIC_AUTH_TOKEN].filter((value): value is string => Boolean(value)),
      notice: (line) => writers.out(line),
    });
    writers.out(`[console] ${running.url}`);
    writers.out(`[console] the runs of ${dirs.join(', ')}${pool ? ' and of the fleet' : ''}; decisions recorded as by ${running.by}. Ctrl-C stops it.`);
    if (args.tokensFile !== null) writers.out(`[console] the tokens of ${args.tokensFile} are taken too, each with its role and tenant; their decisions are recorded as by the token's name.`);
    await stopped;
    await running.close();
    writers.out('[console] stopped');
    return EXIT.done;
  } finally {
    await pool?.end();
  }
}

function interrupted(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}
