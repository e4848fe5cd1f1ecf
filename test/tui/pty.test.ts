/**
 * The real CLI in a real pseudo-terminal (tmux): the live view shows while the run goes on,
 * the final screen holds the done line, and a kill or Ctrl-C leaves the terminal usable with
 * the way to resume on screen. Paced so each step lasts long enough to be seen on a slow machine.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { BIN } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { tmuxPresent } from '../helpers/system-tools.ts';
import { TmuxPane } from '../helpers/tmux.ts';
import { DEMO_PLAIN_LINES } from './demo-events.ts';

const panes: TmuxPane[] = [];
async function start(cwd: string, args: string[], options: { columns?: number; env?: Record<string, string> } = {}): Promise<TmuxPane> {
  const pane = await TmuxPane.start({ cwd, argv: [process.execPath, BIN, ...args], env: options.env, columns: options.columns ?? 100, rows: 40 });
  panes.push(pane);
  return pane;
}
afterEach(async () => {
  for (const pane of panes.splice(0)) await pane.close();
});

const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;
const DONE_LINE = DEMO_PLAIN_LINES.at(-1)!;

describe.skipIf(!tmuxPresent())('the TUI in a terminal', () => {
  it('shows the live view while the demo runs, and the final screen holds the done line', async () => {
    const dir = tempDir();
    const pane = await start(dir, ['demo', '--pace', '500ms']);
    const live = await pane.waitFor('the live view with a call pending', (screen) => screen.includes('▶ pendingTool (A)') && SPINNER.test(screen));
    expect(live).toMatch(/durable-agent · scripted-demo · run [0-9a-f]{8}/);
    expect(live).toMatch(/turn\s+\d of 20 █+░+/);
    expect(live).toMatch(/saved\s+checkpoint A \(pendingTool\)/);
    expect(await pane.cursorVisible()).toBe(false);

    expect(await pane.exitStatus()).toBe(0);
    const final = await pane.screen();
    const lines = final.split('\n');
    expect(lines.slice(0, DEMO_PLAIN_LINES.length)).toEqual(DEMO_PLAIN_LINES);
    expect(final).toContain('▶ done');
    expect(final).toMatch(/now\s+✔ done · after 3 turns/);
    expect(final).not.toMatch(SPINNER);
    expect(await pane.cursorVisible()).toBe(true);
  });

  it('after a simulated kill, leaves the terminal usable and says how to resume; the resume shows its reconcile decision', async () => {
    const dir = tempDir();
    const killed = await start(dir, ['demo', '--pace', '200ms'], { env: { CRASH_AFTER: 'after-effect-write:3' } });
    expect(await killed.exitStatus()).toBe(137);
    const screen = await killed.screen();
    expect(screen).toContain('[turn 3][save A] pending=write_report\n[kill] simulated kill at after-effect-write:3\n');
    expect(screen).toMatch(/now\s+✖ killed \(exit 137\) · the run is saved up to record \d+ \(ledger entry\)/);
    expect(screen).toMatch(/resume with: (npx --no-install )?durable-agent demo --resume\s*$/);
    expect(await killed.cursorVisible()).toBe(true);

    const resumed = await start(dir, ['demo', '--resume', '--pace', '200ms'], { columns: 40 });
    expect(await resumed.exitStatus()).toBe(0);
    const after = await resumed.screen();
    const flat = after.replace(/\s+/g, ' ');
    expect(flat).toContain('[resume] read turn=3 pending=write_report');
    expect(flat).toContain(DONE_LINE);
    expect(after).toMatch(/│ ✔ write_report toolu_03 · +│/);
    expect(after.replace(/[│\s]+/g, ' ')).toContain('reused from the ledger, not re-run');
    for (const line of after.split('\n')) expect(line.length).toBeLessThanOrEqual(40);
    expect(await resumed.cursorVisible()).toBe(true);
  });

  it('on Ctrl-C, finishes the frame, shows the cursor and the resume command', async () => {
    const dir = tempDir();
    const pane = await start(dir, ['demo', '--pace', '1000ms']);
    await pane.waitFor('the first checkpoint A', (screen) => screen.includes('[turn 1][save A]') && SPINNER.test(screen));
    await pane.sendKeys('C-c');
    expect(await pane.exitStatus()).toBe(130);
    const screen = await pane.screen();
    expect(screen).toContain('[interrupted] SIGINT: the run is saved up to its last checkpoint.');
    expect(screen).toMatch(/now\s+✖ interrupted \(exit 130\)/);
    expect(screen).toMatch(/resume with: (npx --no-install )?durable-agent demo --resume/);
    expect(screen).not.toMatch(SPINNER);
    expect(await pane.cursorVisible()).toBe(true);
  });

  it('shows `run` with a real model (over loopback HTTP): its name, the task and an estimated cost, never the key', async () => {
    const key = 'test-only-tui-key-0123456789';
    const usage = { input: 1_000, output: 200, cacheRead: 0, cacheWrite: 0 };
    const server = new FakeAnthropic((request) => ({
      reply:
        assistantTurns(request) === 0
          ? { ...toolUseReply([{ id: 'toolu_a', name: 'list_files', input: {} }]), usage }
          : { ...endTurnReply('There is one file.'), usage },
    }));
    const url = await server.start();
    try {
      const dir = tempDir();
      const pane = await start(dir, ['run', '--task', 'List the files here.', '--model', 'claude-sonnet-4-5'], {
        env: { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: url },
      });
      expect(await pane.exitStatus()).toBe(0);
      const screen = await pane.screen();
      expect(screen).toContain('[done] There is one file.');
      expect(screen).toMatch(/durable-agent · claude-sonnet-4-5 · run [0-9a-f]{8}/);
      expect(screen).toMatch(/task\s+List the files here\./);
      // 2,000 input tokens at $3 and 400 output tokens at $15 per million
      expect(screen).toMatch(/tokens\s+in 2,000 · out 400 · cache read 0 · cache write 0 · ≈ \$0\.012 \(estimate\)/);
      expect(screen).not.toContain(key);
      expect(await pane.cursorVisible()).toBe(true);
    } finally {
      await server.stop();
    }
  });
});
