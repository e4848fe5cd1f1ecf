/**
 * A real pseudo-terminal for the CLI: a private tmux server (its own socket, no user config)
 * runs one command in a pane of a fixed size; the test reads the screen as a person would see
 * it, and waits for what it expects instead of sleeping.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { vi } from 'vitest';
import { cliEnv } from './cli.ts';

const run = promisify(execFile);

export interface PaneOptions {
  cwd: string;
  /** The program and its arguments (no shell). */
  argv: string[];
  env?: Record<string, string | undefined>;
  columns: number;
  rows: number;
}

const EXIT_MARK = /\n?\[pane\] exit (\d+)\s*$/;

export class TmuxPane {
  private constructor(
    private readonly socket: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /**
   * Starts the command in a detached pane. When it ends, a shell prints its exit status and
   * keeps the pane alive, so the terminal is read exactly as the command left it (a dead pane
   * would not say whether the cursor was shown).
   */
  static async start(options: PaneOptions): Promise<TmuxPane> {
    const socket = `da-pty-${randomUUID().slice(0, 8)}`;
    // Not in CI as far as the child can tell: the TUI is what is under test.
    const env = cliEnv({ CI: undefined, CONTINUOUS_INTEGRATION: undefined, TMUX: undefined, ...options.env });
    const config = path.join(options.cwd, '.tmux-test.conf');
    fs.writeFileSync(config, 'set -g status off\n');
    const pane = new TmuxPane(socket, env);
    // The shell outlives a Ctrl-C sent to the pane (the trap), and its child gets SIGINT as usual.
    const shell = `trap : INT; "$@"; echo "[pane] exit $?"; exec sleep 600`;
    const command = ['sh', '-c', shell, 'sh', ...options.argv].map(shellQuote).join(' ');
    await pane.tmux(['-f', config, 'new-session', '-d', '-x', String(options.columns), '-y', String(options.rows), '-c', options.cwd, command]);
    return pane;
  }

  /** What the terminal shows, from the top of its scrollback, without trailing blank lines or the exit status line. */
  async screen(): Promise<string> {
    const { stdout } = await this.tmux(['capture-pane', '-p', '-S', '-']);
    return stdout.replace(/\s+$/, '').replace(EXIT_MARK, '');
  }

  async waitFor(what: string, condition: (screen: string) => boolean, timeoutMs = 60_000): Promise<string> {
    return vi.waitFor(
      async () => {
        const screen = await this.screen();
        if (!condition(screen)) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; the screen was:\n${screen}`);
        return screen;
      },
      { timeout: timeoutMs, interval: 50 },
    );
  }

  /** Resolves with the command's exit status once it has ended. */
  async exitStatus(timeoutMs = 60_000): Promise<number> {
    return vi.waitFor(
      async () => {
        const { stdout } = await this.tmux(['capture-pane', '-p', '-S', '-']);
        const screen = stdout.replace(/\s+$/, '');
        const match = EXIT_MARK.exec(screen);
        if (!match) throw new Error(`the command did not end within ${timeoutMs} ms; the screen was:\n${screen}`);
        return Number(match[1]);
      },
      { timeout: timeoutMs, interval: 100 },
    );
  }

  async cursorVisible(): Promise<boolean> {
    return (await this.display('#{cursor_flag}')) === '1';
  }

  async sendKeys(...keys: string[]): Promise<void> {
    await this.tmux(['send-keys', ...keys]);
  }

  /** Ends the server and everything in it (it runs on its own socket: nothing else is touched). */
  async close(): Promise<void> {
    await this.tmux(['kill-server']).catch(() => {});
  }

  private async display(format: string): Promise<string> {
    const { stdout } = await this.tmux(['display-message', '-p', format]);
    return stdout.trim();
  }

  private tmux(args: string[]): Promise<{ stdout: string; stderr: string }> {
    // -u: UTF-8 whatever the locale, or the TUI's ▶ and spinners would read back as "_".
    return run('tmux', ['-u', '-L', this.socket, ...args], { env: this.env, timeout: 30_000 });
  }
}

function shellQuote(arg: string): string {
  return /^[\w./=:@-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
