/**
 * The one place that decides how a run is shown: the live TUI, or the plain lines. The TUI
 * needs a terminal it owns; anything else (a pipe, a file, CI, --plain) gets the plain lines,
 * which tests and scripts read byte for byte.
 */

export type OutputMode = 'tui' | 'plain';

export interface OutputModeInput {
  /** Whether the stream the lines go to is a terminal. */
  stdoutIsTTY: boolean;
  env: NodeJS.ProcessEnv;
  plain: boolean;
}

export function chooseOutputMode({ stdoutIsTTY, env, plain }: OutputModeInput): OutputMode {
  return stdoutIsTTY && !isCi(env) && !plain ? 'tui' : 'plain';
}

/**
 * The same rule ink applies (its is-in-ci): CI or CONTINUOUS_INTEGRATION set to anything but
 * "0" or "false". Where ink thinks it is in CI it writes nothing until exit, so the TUI must
 * never be chosen there.
 */
export function isCi(env: NodeJS.ProcessEnv): boolean {
  const set = (name: string) => name in env && env[name] !== '0' && env[name] !== 'false';
  return set('CI') || set('CONTINUOUS_INTEGRATION');
}
