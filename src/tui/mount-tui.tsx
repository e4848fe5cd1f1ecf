/** @jsxRuntime automatic @jsxImportSource react */
/**
 * The one entry that mounts ink. Loaded by dynamic import only when the TUI is used, so the
 * plain path never pays for React.
 *
 * Every change is drawn synchronously (rerender in ink's legacy mode commits at once), so a
 * process that exits on the spot — a simulated kill, Ctrl-C — can still draw its last frame and
 * unmount from its 'exit' hook: the cursor comes back, the frame is complete, and the resume
 * command is on screen. After a real SIGKILL nothing runs: the last frame stays as drawn and the
 * cursor stays hidden until the shell or `tput cnorm` shows it.
 */
import { type Instance, render } from 'ink';
import type { Writers } from '../words/run-lines.ts';
import type { RunObserver } from '../core/run-events.ts';
import { TuiApp, type TuiDecider } from './components/TuiApp.tsx';
import { redactSecrets } from '../util/redact.ts';
import { initialView, reduceView, type RunView, type ViewAction, type ViewSettings } from './run-view.ts';

export interface TuiOptions extends ViewSettings {
  /** The terminal to draw on. */
  stdout: NodeJS.WriteStream;
  /** How often the spinners and clocks move. */
  tickMs?: number;
  clock?: () => number;
  /** Route console.* output above the live view (default); off where console cannot be patched. */
  patchConsole?: boolean;
  /** Lets the person at this terminal decide a waiting call (y / n / e); null: the prompt is not shown. */
  decider?: TuiDecider | null;
}

export interface TuiReporter {
  observer: RunObserver;
  /** For lines the command prints itself (the kill line, the interrupt notice): they join the log above the view. */
  writers: Writers;
  /** Draws the last frame and gives the terminal back. Safe to call more than once. */
  close(): void;
  /** The view as drawn now (its log holds only lines not yet written above it). */
  view(): RunView;
}

export function createTuiReporter(options: TuiOptions): TuiReporter {
  const { stdout } = options;
  const clock = options.clock ?? Date.now;
  let view: RunView = initialView(options);
  let instance: Instance | null = null;
  let ticker: NodeJS.Timeout | null = null;
  let closed = false;

  const decider = options.decider ?? null;
  const draw = () => instance?.rerender(<TuiApp view={view} now={clock()} columns={stdout.columns || 80} decider={decider} />);

  // Mounted at the first event, not before: a run refused before it starts (a lock held, an
  // unfinished run in the way) prints its message without an empty frame above it.
  const mount = () => {
    instance = render(<TuiApp view={view} now={clock()} columns={stdout.columns || 80} decider={decider} />, {
      stdout,
      exitOnCtrlC: false,
      patchConsole: options.patchConsole ?? true,
      // ink draws at most maxFps frames a second (30 by default: up to 34 ms late); a streamed
      // reply's first words should be on screen within 50 ms of their arrival.
      maxFps: 60,
    });
    ticker = setInterval(draw, options.tickMs ?? 100);
    ticker.unref();
    process.once('exit', onExit);
  };

  const dispatch = (action: ViewAction) => {
    if (closed) return;
    view = reduceView(view, action);
    if (instance) draw();
    else if (action.type === 'event') mount();
    // Drawn synchronously: the new lines are above the live view now, and need not be kept.
    if (instance) view = reduceView(view, { type: 'written' });
  };

  const unmount = () => {
    if (closed) return;
    closed = true;
    if (ticker) clearInterval(ticker);
    process.off('exit', onExit);
    if (!instance) return;
    draw();
    instance.unmount();
    instance = null;
  };

  function onExit(code: number) {
    dispatch({ type: 'exit', code });
    unmount();
  }

  return {
    observer: (event) => dispatch({ type: 'event', event, at: clock() }),
    writers: {
      out: (text) => (instance ? dispatch({ type: 'print', stream: 'out', text }) : stdout.write(`${redactSecrets(text)}\n`)),
      err: (text) => (instance ? dispatch({ type: 'print', stream: 'err', text }) : process.stderr.write(`${redactSecrets(text)}\n`)),
    },
    close: () => {
      dispatch({ type: 'close' });
      unmount();
    },
    view: () => view,
  };
}
