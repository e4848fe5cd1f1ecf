/**
 * The real CLI: a run started by `durable-agent run` (a real SDK against the fake Messages API)
 * and killed is not picked up by `demo --resume`, whose tools would act on the same directory:
 * refused with exit 2, the user's files and the journal untouched. `run --resume` goes on.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const MODEL = 'claude-test-model';
const USAGE = { input: 50, output: 20, cacheRead: 0, cacheWrite: 0 };
const USERS_REPORT = 'My own report: do not touch.\n';

describe('a resume by another command than the one that started the run', () => {
  it('demo --resume on a run that `run` started is refused (exit 2, nothing touched); run --resume goes on', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'report.txt'), USERS_REPORT);
    const script = [
      toolUseReply([{ id: 'toolu_a', name: 'list_files', input: {} }]),
      toolUseReply([{ id: 'toolu_b', name: 'write_file', input: { path: 'out/summary.md', content: 'Summary.\n' } }]),
      endTurnReply('Wrote out/summary.md.'),
    ];
    const server = new FakeAnthropic((request) => ({ reply: { ...script[assistantTurns(request)]!, usage: USAGE } }));
    const url = await server.start();
    const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url };
    try {
      const killed = await runCliAsync(['run', '--task', 'Summarise the files into out/summary.md', '--model', MODEL], {
        cwd: dir,
        env: { ...env, CRASH_AFTER: 'after-save-a:2', CRASH_MODE: 'sigkill' },
      });
      expect(killed.signal).toBe('SIGKILL');
      const journal = path.join(dir, '.durable-agent', 'journal.jsonl');
      const before = fs.readFileSync(journal);
      const filesBefore = fs.readdirSync(dir).sort();

      const refused = await runCliAsync(['demo', '--resume'], { cwd: dir });
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain('was started by `durable-agent run` (model claude-test-model; tools list_files, read_file, write_file)');
      expect(refused.stderr).toContain('this resume is `durable-agent demo` (model scripted-demo; tools read_notes, count_words, write_report)');
      expect(refused.stderr).toContain(`\`durable-agent run --resume --model ${MODEL}\``);
      expect(refused.stderr).toContain('--allow-tool-change');
      expect(fs.readFileSync(path.join(dir, 'report.txt'), 'utf8')).toBe(USERS_REPORT);
      expect(fs.readFileSync(journal)).toEqual(before);
      expect(fs.readdirSync(dir).sort()).toEqual(filesBefore);

      // The cause fixed, the right command: the run goes on and finishes.
      const resumed = await runCliAsync(['run', '--resume', '--model', MODEL], { cwd: dir, env });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('[done] Wrote out/summary.md.');
      expect(fs.readFileSync(path.join(dir, 'out', 'summary.md'), 'utf8')).toBe('Summary.\n');
      expect(fs.readFileSync(path.join(dir, 'report.txt'), 'utf8')).toBe(USERS_REPORT);
    } finally {
      await server.stop();
    }
  });
});

describe('a resume that names no model', () => {
  it('run --resume without --model takes the model the run started with; with no run to resume it is refused', async () => {
    const dir = tempDir();
    const script = [toolUseReply([{ id: 'toolu_a', name: 'list_files', input: {} }]), endTurnReply('No files.')];
    const server = new FakeAnthropic((request) => ({ reply: { ...script[assistantTurns(request)]!, usage: USAGE } }));
    const url = await server.start();
    const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url };
    try {
      const killed = await runCliAsync(['run', '--task', 'List the files', '--model', MODEL], { cwd: dir, env: { ...env, CRASH_AFTER: 'after-save-a:1', CRASH_MODE: 'sigkill' } });
      expect(killed.signal).toBe('SIGKILL');
      const resumed = await runCliAsync(['run', '--resume', '--plain'], { cwd: dir, env });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('[done] No files.');
      expect(server.requests.at(-1)!.body.model).toBe(MODEL);

      const none = await runCliAsync(['run', '--resume'], { cwd: tempDir(), env });
      expect(none.code).toBe(2);
      expect(none.stderr).toMatch(/No run is stored/);
    } finally {
      await server.stop();
    }
  });
});
