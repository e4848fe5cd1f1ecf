/**
 * How the command's process ends. On a pipe, Node writes stdout and stderr asynchronously: what
 * the pipe's buffer (64 KiB) cannot take yet stays queued in the process, and process.exit()
 * drops it, so `status --json | jq` got a cut-off document with exit code 0. The exit here waits
 * until both streams have handed everything to the system, however slowly the reader reads.
 *
 * A reader that goes away first (`| head -1`) is no failure of the command: the rest of the
 * output has nowhere to go and is dropped, and the command ends as it would have (a run started
 * goes on to its end, as with its output to a file). Any other failure to write the output (a full
 * disk under `> file`) is said on stderr and the command ends with the environment's exit code.
 */
import { EXIT } from './exit-codes.ts';

type Output = NodeJS.WriteStream;

/** A write error other than a reader gone, on either stream: reported once, at the exit. */
let failed: { stream: string; error: NodeJS.ErrnoException } | null = null;

/**
 * Takes the 'error' events of stdout and stderr, before anything is written: without a listener
 * a reader gone (EPIPE) is an uncaught exception, a stack trace on stderr and exit code 1.
 */
export function watchOutput(): void {
  for (const [name, stream] of [['stdout', process.stdout], ['stderr', process.stderr]] as const) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && failed === null) failed = { stream: name, error };
    });
  }
}

/** Exits with `code` once stdout and stderr have written everything queued (or can write no more). */
export async function exitWhenWritten(code: number): Promise<never> {
  await Promise.all([written(process.stdout), written(process.stderr)]);
  process.exit((await outputFailure()) ?? code);
}

/** The exit code of a failed output, after saying so on whichever stream still works; null: none failed. */
async function outputFailure(): Promise<number | null> {
  if (failed === null) return null;
  const { stream, error } = failed;
  // Loaded only here: every command loads this module, few fail to write.
  const { environmentProblem } = await import('../store/fs-problems.ts');
  const problem = environmentProblem(error, `write the command's ${stream}`, stream)?.message ?? error.message;
  const other = stream === 'stderr' ? process.stdout : process.stderr;
  if (!other.destroyed) other.write(`durable-agent: ${problem}\n`);
  return EXIT.storeWriteFailed;
}

/** Resolves when everything written to `stream` so far has left the process, or never will. */
function written(stream: Output): Promise<void> {
  if (stream.destroyed || stream.writableLength === 0) return Promise.resolve();
  // Writes leave in order: when an empty one is done, so is everything before it. An error
  // (the reader gone) ends the wait too; the 'error' listener above has taken it.
  return new Promise((resolve) => stream.write('', () => resolve()));
}
