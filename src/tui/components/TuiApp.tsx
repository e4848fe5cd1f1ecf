/** @jsxRuntime automatic @jsxImportSource react */
/** The whole screen: finished lines scroll above as permanent output, the live view below. */
import { Static } from 'ink';
import type { RunView } from '../run-view.ts';
import { DecisionPrompt, type PromptDecide } from './DecisionPrompt.tsx';
import { LiveView } from './LiveView.tsx';
import { LogLine } from './LogLine.tsx';

/** `decide`: set when a person at this terminal can decide a waiting call (stdin is a terminal too). */
export interface TuiDecider {
  decide: PromptDecide;
  by: string;
}

export function TuiApp({ view, now, columns, decider }: { view: RunView; now: number; columns: number; decider?: TuiDecider | null }) {
  return (
    <>
      {/* A new <Static> once written lines were dropped from the log: it writes what the log holds from its start. */}
      <Static key={view.logWritten} items={view.log}>
        {(entry) => <LogLine key={entry.id} entry={entry} />}
      </Static>
      <LiveView view={view} now={now} columns={columns} />
      {view.prompt && decider ? <DecisionPrompt key={view.prompt.id} call={view.prompt} decide={decider.decide} by={decider.by} /> : null}
    </>
  );
}
