/**
 * DBOS Transact as a contender: a workflow with one step per turn, each step returning that turn's
 * payload (the bytes our run writes in that turn), so DBOS checkpoints the same bytes in its own
 * system database. Installed on demand into a scratch folder outside the repository (never a
 * dependency of the package); when it cannot be installed or launched, the bench says why and
 * goes on without it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const PACKAGE = '@dbos-inc/dbos-sdk';
export const DBOS_SCRATCH = path.join(os.tmpdir(), 'durable-agent-bench-dbos');

/** What the bench uses of the SDK's DBOS class. */
interface DbosApi {
  setConfig(config: Record<string, unknown>): void;
  launch(): Promise<void>;
  shutdown(): Promise<void>;
  registerWorkflow<A extends unknown[], R>(fn: (...args: A) => Promise<R>, config: { name: string }): (...args: A) => Promise<R>;
  runStep<R>(fn: () => Promise<R>, config: { name: string }): Promise<R>;
}

export interface DbosContender {
  version: string;
  /** Runs one workflow of `payloads.length` steps, each returning its payload; resolves when it has ended. */
  run(payloads: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

export class DbosUnavailableError extends Error {
  override readonly name = 'DbosUnavailableError';
  constructor(readonly why: string) {
    super(why);
  }
}

/** Installs the SDK into the scratch folder unless it is there already; its entry file. */
function install(log: (line: string) => void): string {
  const manifest = path.join(DBOS_SCRATCH, 'package.json');
  const require = createRequire(manifest);
  try {
    return require.resolve(PACKAGE);
  } catch {
    // Not installed yet.
  }
  fs.mkdirSync(DBOS_SCRATCH, { recursive: true });
  if (!fs.existsSync(manifest)) fs.writeFileSync(manifest, `${JSON.stringify({ name: 'durable-agent-bench-dbos', private: true }, null, 2)}\n`);
  log(`installing ${PACKAGE} into ${DBOS_SCRATCH} (outside the repository)`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error', PACKAGE], { cwd: DBOS_SCRATCH, encoding: 'utf8', timeout: 300_000 });
  if (result.status !== 0) throw new DbosUnavailableError(`npm install ${PACKAGE} failed (${result.error?.message ?? result.stderr.trim().split('\n').at(-1) ?? `exit ${result.status}`})`);
  try {
    return require.resolve(PACKAGE);
  } catch (error) {
    throw new DbosUnavailableError(`${PACKAGE} installed but not found (${(error as Error).message})`);
  }
}

/** Installs (when needed) and launches DBOS on `systemDatabaseUrl` (a database DBOS makes itself). */
export async function startDbos(systemDatabaseUrl: string, log: (line: string) => void): Promise<DbosContender> {
  const entry = install(log);
  const version = (JSON.parse(fs.readFileSync(path.join(DBOS_SCRATCH, 'node_modules', ...PACKAGE.split('/'), 'package.json'), 'utf8')) as { version: string }).version;
  let DBOS: DbosApi;
  try {
    const loaded = (await import(pathToFileURL(entry).href)) as { DBOS?: DbosApi; default?: { DBOS?: DbosApi } };
    const found = loaded.DBOS ?? loaded.default?.DBOS;
    if (!found) throw new Error('it exports no DBOS class');
    DBOS = found;
  } catch (error) {
    throw new DbosUnavailableError(`${PACKAGE} ${version} could not be loaded (${(error as Error).message})`);
  }
  let payloads: readonly string[] = [];
  // The workflow's input is its step count alone: the payloads are not written twice (as input and as outputs).
  const workflow = DBOS.registerWorkflow(
    async (steps: number) => {
      for (let step = 0; step < steps; step++) {
        const payload = payloads[step]!;
        await DBOS.runStep(async () => payload, { name: 'turn' });
      }
      return steps;
    },
    { name: 'benchTurns' },
  );
  try {
    DBOS.setConfig({ name: 'durable-agent-bench', systemDatabaseUrl, logLevel: 'error' });
    await DBOS.launch();
  } catch (error) {
    await DBOS.shutdown().catch(() => {});
    throw new DbosUnavailableError(`DBOS ${version} did not launch (${(error as Error).message})`);
  }
  return {
    version,
    async run(given) {
      payloads = given;
      await workflow(given.length);
    },
    stop: () => DBOS.shutdown(),
  };
}
