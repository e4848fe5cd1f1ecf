/**
 * The live view's prompt in a real pseudo-terminal (tmux), with the real CLI: a run that waits
 * for an approval asks y / n / e; the key decides, through the same inbox as `approve`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { tmuxPresent } from '../helpers/system-tools.ts';
import { TmuxPane } from '../helpers/tmux.ts';

const panes: TmuxPane[] = [];
async function start(cwd: string, args: string[]): Promise<TmuxPane> {
  const pane = await TmuxPane.start({ cwd, argv: [process.execPath, BIN, ...args], columns: 100, rows: 40 });
  panes.push(pane);
  return pane;
}
afterEach(async () => {
  for (const pane of panes.splice(0)) await pane.close();
});

const PROMPT = 'y approve · n deny · e edit the input';
const user = os.userInfo().username;
const flat = (screen: string) => screen.replace(/[│╭╮╰╯─]/g, ' ').replace(/\s+/g, ' ');

function auditLines(dir: string): number {
  const file = path.join(dir, 'report-audit.log');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
}

describe.skipIf(!tmuxPresent())('the live view asks for a decision', () => {
  it('y approves: the report is written once', async () => {
    const dir = tempDir();
    const pane = await start(dir, ['demo', '--require-approval', 'write_report']);
    const asked = await pane.waitFor('the prompt', (screen) => screen.includes(PROMPT));
    expect(flat(asked)).toContain('approval toolu_03 write_report');
    expect(asked).toContain('[approval] toolu_03 write_report waits for a decision');
    await pane.sendKeys('y');
    expect(await pane.exitStatus()).toBe(0);
    const screen = flat(await pane.screen());
    expect(screen).toContain(`[decided] toolu_03 write_report approved by ${user}`);
    expect(screen).toContain('[done] Report written to report.txt, task complete.');
    expect(screen).not.toContain(PROMPT);
    expect(auditLines(dir)).toBe(1);
    expect(await pane.cursorVisible()).toBe(true);
  });

  it('n asks why, and denies with that reason: the report is never written', async () => {
    const dir = tempDir();
    const pane = await start(dir, ['demo', '--require-approval', 'write_report']);
    await pane.waitFor('the prompt', (screen) => screen.includes(PROMPT));
    await pane.sendKeys('n');
    await pane.waitFor('the reason line', (screen) => screen.includes('why (Enter to deny, Esc back)'));
    await pane.sendKeys('-l', 'too long');
    await pane.sendKeys('Enter');
    expect(await pane.exitStatus()).toBe(0);
    const screen = flat(await pane.screen());
    expect(screen).toContain(`[decided] toolu_03 write_report denied by ${user}: too long`);
    expect(screen).toContain('[done] I did not write report.txt: denied by a person: too long');
    expect(fs.existsSync(path.join(dir, 'report.txt'))).toBe(false);
  });

  it('e edits the input: what is not JSON is refused on the spot, Esc goes back, and the run still waits', async () => {
    const dir = tempDir();
    const pane = await start(dir, ['demo', '--require-approval', 'write_report']);
    await pane.waitFor('the prompt', (screen) => screen.includes(PROMPT));
    await pane.sendKeys('e');
    await pane.waitFor('the input line', (screen) => screen.includes('input as JSON (Enter to approve, Esc back)'));
    // Text and Enter in one write, as a paste or a busy machine delivers them: the line ends at the Enter.
    await pane.sendKeys('-l', 'oops\r');
    await pane.waitFor('the JSON error', (screen) => flat(screen).includes('not JSON:'), 20_000);
    await pane.sendKeys('Escape');
    await pane.waitFor('the keys again', (screen) => screen.includes(PROMPT));
    await pane.sendKeys('y');
    expect(await pane.exitStatus()).toBe(0);
    expect(auditLines(dir)).toBe(1);
  });

  it('takes an approve from another terminal while it asks', async () => {
    const dir = tempDir();
    const pane = await start(dir, ['demo', '--require-approval', 'write_report']);
    await pane.waitFor('the prompt', (screen) => screen.includes(PROMPT));
    const { runCliAsync } = await import('../helpers/cli.ts');
    expect((await runCliAsync(['approve', 'toolu_03', '--by', 'elsewhere'], { cwd: dir })).code).toBe(0);
    expect(await pane.exitStatus()).toBe(0);
    expect(flat(await pane.screen())).toContain('[decided] toolu_03 write_report approved by elsewhere');
    expect(auditLines(dir)).toBe(1);
  });

  it('Ctrl-C while it asks interrupts the run like anywhere else (exit 130), and the terminal is usable', async () => {
    const dir = tempDir();
    const pane = await start(dir, ['demo', '--require-approval', 'write_report']);
    await pane.waitFor('the prompt', (screen) => screen.includes(PROMPT));
    await pane.sendKeys('C-c');
    expect(await pane.exitStatus()).toBe(130);
    const screen = await pane.screen();
    expect(screen).toContain('[interrupted] SIGINT: the run is saved up to its last checkpoint.');
    // The rule is pinned in the journal: the resume command needs no --require-approval.
    expect(screen).toMatch(/resume with: (npx --no-install )?durable-agent demo --resume(\s|$)/);
    expect(await pane.cursorVisible()).toBe(true);
    expect(auditLines(dir)).toBe(0);
  });
});
