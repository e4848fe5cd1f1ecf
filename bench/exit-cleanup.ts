/**
 * What a bench starts outside its own process (a git worktree, a PostgreSQL cluster, worker
 * processes) is taken down on every way out: the end of main, a throw, an unsettled await, SIGINT
 * or SIGTERM. Cleanups are synchronous, so that a signal handler and the `exit` event can run
 * them; each runs once, the last registered first (a worker stops before the cluster it uses).
 */

interface Cleanup {
  what: string;
  run: () => void;
}

const pending: Cleanup[] = [];
let installed = false;

/** What a failed cleanup said: printed, never thrown (the others still run). */
function report(what: string, error: unknown): void {
  process.stderr.write(`could not clean up ${what}: ${error instanceof Error ? error.message : String(error)}\n`);
}

function runOne(cleanup: Cleanup): void {
  const at = pending.indexOf(cleanup);
  if (at === -1) return;
  pending.splice(at, 1);
  try {
    cleanup.run();
  } catch (error) {
    report(cleanup.what, error);
  }
}

/** Runs every cleanup still registered, the last registered first. */
export function runCleanups(): void {
  while (pending.length > 0) runOne(pending[pending.length - 1]!);
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', runCleanups);
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.on(signal, () => {
      if (pending.length > 0) process.stderr.write(`${signal}: cleaning up ${pending.map((cleanup) => cleanup.what).join(', ')}\n`);
      runCleanups();
      process.exit(code);
    });
  }
}

/**
 * Registers `run` (`what` names it in a message if it fails); returns the function that runs it
 * now and unregisters it, for the ordinary path.
 */
export function onExit(what: string, run: () => void): () => void {
  install();
  const cleanup = { what, run };
  pending.push(cleanup);
  return () => runOne(cleanup);
}

/** The cleanups still registered, by name (for tests). */
export function pendingCleanups(): string[] {
  return pending.map((cleanup) => cleanup.what);
}
