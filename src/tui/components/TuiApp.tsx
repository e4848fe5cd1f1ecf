/** @jsxRuntime automatic @jsxImportSource react */
/** The whole screen: finished lines scroll above as permanent output, the live view below. */
import { Static } from 'ink';
import type { RunView } from '../run-view.ts';
import { LiveView } from './LiveView.tsx';
import { LogLine } from './LogLine.tsx';

export function TuiApp({ view, now, columns }: { view: RunView; now: number; columns: number }) {
  return (
    <>
      <Static items={view.log}>{(entry) => <LogLine key={entry.id} entry={entry} />}</Static>
      <LiveView view={view} now={now} columns={columns} />
    </>
  );
}
