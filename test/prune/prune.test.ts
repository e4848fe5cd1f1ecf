/**
 * `durable-agent prune` on the file store, with the real CLI as a process and real files:
 * finished archived runs go with their decisions, the current run and unfinished archived runs
 * stay, --dry-run removes nothing, bad input removes nothing (exit 2), a removal that fails
 * half-way leaves no damaged run in the archive, and a prune racing a running run leaves it alone.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pruneRuns } from '../../src/prune/prune-archive.ts';
import { PruneRuleMissingError } from '../../src/prune/prune-plan.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { readJournal } from '../../src/store/journal/journal-reader.ts';
import { runCli, startCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const DAY = 86_400_000;

const archiveOf = (dir: string) => path.join(dir, '.durable-agent', 'archive');
const listing = (dir: string) => (fs.existsSync(archiveOf(dir)) ? fs.readdirSync(archiveOf(dir)).sort() : []);
const journals = (dir: string) => listing(dir).filter((name) => name.startsWith('journal-'));

function demo(dir: string, extra: string[] = [], env?: Record<string, string>) {
  const result = runCli(['demo', '--dir', dir, '--plain', ...extra], { cwd: dir, ...(env ? { env } : {}) });
  return result;
}

/** A directory whose archive holds `finished` done runs (oldest first), with a current done run beside them. */
function dirWithArchivedRuns(finished: number): string {
  const dir = tempDir('da-prune-');
  for (let i = 0; i <= finished; i++) expect(demo(dir).code).toBe(0);
  expect(journals(dir)).toHaveLength(finished);
  return dir;
}

function runIdOf(journal: string): string {
  return readJournal(journal, fs.readFileSync(journal)).header.runId;
}

describe('durable-agent prune (file store)', () => {
  it('--keep N removes all but the N newest finished archived runs, with their decisions; --dry-run removes nothing', () => {
    const dir = dirWithArchivedRuns(3);
    const [oldest, middle, newest] = journals(dir);
    // Decisions archived with the oldest run (same time in the name) go with it.
    const decisions = path.join(archiveOf(dir), oldest!.replace(/^journal-(.+)\.jsonl$/, 'decisions-$1'));
    fs.mkdirSync(decisions);
    fs.writeFileSync(path.join(decisions, 'toolu_03.json'), '{"verdict":"approve"}');
    const current = fs.readFileSync(path.join(dir, '.durable-agent', 'journal.jsonl'));
    const ids = [oldest, middle].map((name) => runIdOf(path.join(archiveOf(dir), name!)));

    const dry = runCli(['prune', '--dir', dir, '--keep', '1', '--dry-run'], { cwd: dir });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(new RegExp(`would remove +${ids[1]} +done `));
    expect(dry.stdout).toMatch(new RegExp(`would remove +${ids[0]} +done `));
    expect(dry.stdout).toMatch(/would remove 2 archived runs, [\d.]+ kB \(dry run: nothing was removed\)/);
    expect(journals(dir)).toEqual([oldest, middle, newest]);
    expect(fs.existsSync(decisions)).toBe(true);

    const pruned = runCli(['prune', '--dir', dir, '--keep', '1'], { cwd: dir });
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toMatch(new RegExp(`removed +${ids[0]} +done +\\S+Z +[\\d.]+ kB +${oldest}`));
    expect(pruned.stdout).toMatch(/removed 2 archived runs, [\d.]+ kB/);
    expect(listing(dir)).toEqual([newest]);
    expect(fs.readFileSync(path.join(dir, '.durable-agent', 'journal.jsonl'))).toEqual(current);
    const status = runCli(['status', '--dir', dir], { cwd: dir });
    expect(status.stdout).toMatch(/state +done/);

    const again = runCli(['prune', '--dir', dir, '--keep', '1'], { cwd: dir });
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe('removed 0 archived runs, 0 B');
  });

  it('never removes an unfinished archived run (moved aside by --fresh), whatever the rule', () => {
    const dir = tempDir('da-prune-');
    const crashed = demo(dir, [], { CRASH_AFTER: 'after-effect-write:2' });
    expect(crashed.code).toBe(137);
    expect(demo(dir, ['--fresh']).code).toBe(0);
    expect(demo(dir).code).toBe(0);
    const [unfinished, finished] = journals(dir);
    const pruned = runCli(['prune', '--dir', dir, '--older-than', '0s'], { cwd: dir });
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toMatch(/removed 1 archived run,/);
    expect(pruned.stderr).toMatch(new RegExp(`kept ${unfinished}: unfinished \\(\\w+\\)`));
    expect(journals(dir)).toEqual([unfinished]);
    expect(finished).toBeDefined();
  });

  it('--older-than measures from when the run finished; with --keep too, a run goes only if both say so', async () => {
    const dir = dirWithArchivedRuns(3);
    const store = new FileStore(path.join(dir, '.durable-agent'));
    expect((await pruneRuns(store, { olderThanMs: DAY, dryRun: true })).removed).toEqual([]);
    // Three days on, all three are older than a day; --keep 2 still keeps two of them.
    const later = Date.now() + 3 * DAY;
    expect((await pruneRuns(store, { olderThanMs: DAY, dryRun: true, now: later })).removed).toHaveLength(3);
    const both = await pruneRuns(store, { olderThanMs: DAY, keep: 2, now: later });
    expect(both.removed).toHaveLength(1);
    expect(both.totalBytes).toBeGreaterThan(0);
    expect(journals(dir)).toHaveLength(2);
    await expect(pruneRuns(store, {})).rejects.toBeInstanceOf(PruneRuleMissingError);
  });

  it('bad input: no rule, a --dir that does not exist, a negative or garbage value: exit 2, nothing removed', () => {
    const dir = dirWithArchivedRuns(1);
    const before = listing(dir);
    for (const args of [
      ['prune', '--dir', dir],
      ['prune', '--dir', path.join(dir, 'nope'), '--keep', '0'],
      ['prune', '--dir', dir, '--keep=-1'],
      ['prune', '--dir', dir, '--keep', 'many'],
      ['prune', '--dir', dir, '--older-than', '30'],
      ['prune', '--dir', dir, '--older-than=-3d'],
      ['prune', '--dir', dir, '--database-url', 'postgresql://x@127.0.0.1:1/db', '--keep', '0'],
    ]) {
      const result = runCli(args, { cwd: dir });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toMatch(/^durable-agent: /);
    }
    expect(runCli(['prune', '--dir', dir], { cwd: dir }).stderr).toContain('prune needs a rule: --older-than DURATION');
    expect(listing(dir)).toEqual(before);
  });

  it.skipIf(!canMakeImmutable())('a run whose pieces cannot all be removed never stays in the archive half-removed; the next prune finishes it', () => {
    const dir = dirWithArchivedRuns(2);
    const [first, second] = journals(dir);
    const stamp = (name: string) => name.replace(/^journal-(.+)\.jsonl$/, '$1');
    // The first run's decisions directory cannot be moved: the run stays as it was, whole.
    const stuckDir = path.join(archiveOf(dir), `decisions-${stamp(first!)}`);
    fs.mkdirSync(stuckDir);
    fs.writeFileSync(path.join(stuckDir, 'toolu_03.json'), '{}');
    // The second run's decision file cannot be deleted: moved aside, the rest deleted, the leftover named .pruning-.
    const stuckFile = path.join(archiveOf(dir), `decisions-${stamp(second!)}`, 'toolu_03.json');
    fs.mkdirSync(path.dirname(stuckFile));
    fs.writeFileSync(stuckFile, '{}');
    chattr('+i', stuckDir);
    chattr('+i', stuckFile);
    try {
      const pruned = runCli(['prune', '--dir', dir, '--keep', '0'], { cwd: dir });
      expect(pruned.code).toBe(4);
      expect(pruned.stderr).toContain(`could not remove ${first}: could not move it aside`);
      expect(pruned.stderr).toContain(`could not remove ${second}: its pieces were moved aside but could not all be deleted`);
      expect(listing(dir)).toEqual([`.pruning-decisions-${stamp(second!)}`, `decisions-${stamp(first!)}`, first].sort());
      expect(runCli(['status', '--dir', dir], { cwd: dir }).code).toBe(0);
    } finally {
      chattr('-i', stuckDir);
      chattr('-i', path.join(archiveOf(dir), `.pruning-decisions-${stamp(second!)}`, 'toolu_03.json'));
    }
    const again = runCli(['prune', '--dir', dir, '--keep', '0'], { cwd: dir });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`deleted .pruning-decisions-${stamp(second!)}, left by an interrupted prune`);
    expect(again.stdout).toMatch(/removed 1 archived run,/);
    expect(listing(dir)).toEqual([]);
  });

  it('a prune racing a running (paced) run never touches it: the run finishes and its journal is whole', async () => {
    const dir = dirWithArchivedRuns(2);
    const running = startCli(['demo', '--dir', dir, '--plain', '--pace', '150'], { cwd: dir });
    let prunes = 0;
    while (running.child.exitCode === null && prunes < 40) {
      const pruned = runCli(['prune', '--dir', dir, '--keep', '0'], { cwd: dir });
      expect(pruned.code, pruned.stderr).toBe(0);
      prunes++;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const result = await running.done;
    expect(result.code, result.stderr).toBe(0);
    expect(prunes).toBeGreaterThan(2);
    // The run that was current when the demo started was archived by it and pruned meanwhile; the live one is whole.
    expect(journals(dir).length).toBeLessThanOrEqual(1);
    const status = runCli(['status', '--dir', dir], { cwd: dir });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/state +done/);
    expect(runCli(['history', '--dir', dir], { cwd: dir }).code).toBe(0);
  });
});

function chattr(flag: string, target: string): void {
  const result = spawnSync('chattr', [flag, target], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`chattr ${flag} ${target}: ${result.stderr}`);
}

/** Root ignores file modes; an immutable attribute stops even root (where the file system supports it). */
function canMakeImmutable(): boolean {
  const dir = tempDir('da-prune-attr-');
  const file = path.join(dir, 'f');
  fs.writeFileSync(file, '');
  const set = spawnSync('chattr', ['+i', file]);
  if (set.status !== 0) return false;
  spawnSync('chattr', ['-i', file]);
  return true;
}
