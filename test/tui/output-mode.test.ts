import { describe, expect, it } from 'vitest';
import { chooseOutputMode, isCi } from '../../src/cli/output-mode.ts';
import { openRunReporter } from '../../src/cli/run-reporter.ts';

describe('choosing the TUI or the plain lines', () => {
  it('shows the TUI only on a terminal, outside CI, without --plain', () => {
    expect(chooseOutputMode({ stdoutIsTTY: true, env: {}, plain: false })).toBe('tui');
    expect(chooseOutputMode({ stdoutIsTTY: false, env: {}, plain: false })).toBe('plain');
    expect(chooseOutputMode({ stdoutIsTTY: true, env: {}, plain: true })).toBe('plain');
    expect(chooseOutputMode({ stdoutIsTTY: true, env: { CI: 'true' }, plain: false })).toBe('plain');
    expect(chooseOutputMode({ stdoutIsTTY: true, env: { CI: '' }, plain: false })).toBe('plain');
    expect(chooseOutputMode({ stdoutIsTTY: true, env: { CONTINUOUS_INTEGRATION: '1' }, plain: false })).toBe('plain');
  });

  it('reads CI the way ink does, so the two never disagree', () => {
    expect(isCi({ CI: '0' })).toBe(false);
    expect(isCi({ CI: 'false' })).toBe(false);
    expect(isCi({ CI: '1' })).toBe(true);
    expect(isCi({})).toBe(false);
  });

  it('reports plainly to writers that are not the terminal, whatever the terminal is', async () => {
    const out: string[] = [];
    const reporter = await openRunReporter({ out: (line) => out.push(line), err: () => {} }, {}, {
      plain: false,
      verbose: false,
      task: null,
      resumeHint: 'x',
    });
    reporter.observer({ type: 'model-call', turn: 0, model: 'm', provider: null, maxTokens: 1, system: null, messages: [] });
    reporter.observer({
      type: 'finished',
      result: { runId: 'r', status: 'done', text: 'ok', failure: null, turn: 1, maxTurns: 2, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } },
    });
    reporter.close();
    expect(out).toEqual(['[done] ok']);
  });
});
