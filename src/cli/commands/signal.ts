/**
 * `durable-agent signal`: an event for a run's wait, from another process. It reads the journal
 * without a lock (to refuse a run that is not there or has ended, and to say whether a call
 * waits for the event now) and writes only the signal's inbox entry, a file beside the journal
 * or a row of da_signals; the run's wait takes it once.
 */
import { type SentSignal, sendSignal } from '../../awaits/send-signal.ts';
import type { RunStore } from '../../store/store.ts';
import type { SignalArgs } from '../specs/signal.ts';
import { runDirOf } from '../run-dir.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';
import { fileStoreOf } from '../run-store.ts';
import { fleetStoreOf } from '../fleet-store.ts';
import { userName } from '../user-name.ts';

export async function signalCommand(args: SignalArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  if (args.fleetRun !== null) {
    const { databaseUrlOf, openDatabase } = await import('../../store/pg/pool.ts');
    const pool = await openDatabase(databaseUrlOf(args.databaseUrl, env, 'signal --run'), 2);
    try {
      return await send(await fleetStoreOf(pool, args.fleetRun), `fleet run ${args.fleetRun}`, args, writers);
    } finally {
      await pool.end();
    }
  }
  const dir = runDirOf(args.dir);
  return send(fileStoreOf(dir, args.fileRun), args.fileRun === null ? `the run in ${dir}` : `run ${args.fileRun} in ${dir}`, args, writers);
}

async function send(store: RunStore, where: string, args: SignalArgs, writers: Writers): Promise<number> {
  const sent = await sendSignal(store, { name: args.name, data: args.data, by: args.by ?? userName(), ...(args.id === null ? {} : { id: args.id }) });
  writers.out(signalLine(sent, where));
  return EXIT.done;
}

/** What the send did, in one line: delivered (to a waiting call or kept), or not again. */
export function signalLine(sent: SentSignal, where: string): string {
  const { signal, delivery, waitingCall } = sent;
  const what = `${signal.name}${signal.id === null ? '' : ` (id ${signal.id})`}`;
  switch (delivery.outcome) {
    case 'delivered':
      return waitingCall
        ? `[signal] ${what} delivered to ${where}: ${waitingCall} waits for it and takes it (within a second; a stopped run when it is resumed).`
        : `[signal] ${what} delivered to ${where}: no call waits for it yet; it is kept until a wait for ${signal.name} takes it.`;
    case 'waiting':
      return `[signal] ${what} was sent to ${where} already and waits to be taken: not delivered again (a wait takes it once).`;
    case 'taken':
      return `[signal] ${what} was taken already, by ${delivery.tool_use_id} of ${where}: not delivered again.`;
  }
}
