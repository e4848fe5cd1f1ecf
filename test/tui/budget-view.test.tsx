/** @jsxRuntime automatic @jsxImportSource react */
/** The live view of a run with a budget: the cost counted, each limit with what is left, and the stop. */
import { Box } from 'ink';
import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { LiveView } from '../../src/tui/components/LiveView.tsx';
import type { RunView } from '../../src/tui/run-view.ts';
import { runDemo, viewOf } from './demo-events.ts';

afterEach(cleanup);

function frame(view: RunView, now: number, columns = 120): string {
  const { lastFrame } = render(
    <Box width={columns}>
      <LiveView view={view} now={now} columns={columns} />
    </Box>,
  );
  return lastFrame() ?? '';
}

describe('the live view of a run with a budget', () => {
  it('shows the counted cost, each limit and what is left while the run goes on, and the stop with exit 8 at the end', async () => {
    // The demo's first reply costs about $0.0009 at Sonnet's list price: a $0.0005 budget stops the run after turn 1.
    const { events } = await runDemo({ model: 'claude-sonnet-4-5-20250929', budget: { maxCostUsd: 0.0005, maxTotalTokens: 100_000 } });
    const during = viewOf(events, (e) => e.type === 'saved' && e.point === 'save-a' && e.turn === 1);
    const text = frame(during, during.lastSave!.at);
    expect(text).toMatch(/tokens\s+in 100 · out \d+ · cache read 0 · cache write 0 · \$0\.0\d{3} at list prices/);
    expect(text).toMatch(/budget\s+cost \$0\.0\d{3} of \$0\.0005 \(\$0 left\) · tokens 1\d\d of 100,000 \(99,8\d\d left\)/);

    const end = viewOf(events);
    expect(end.ending).toMatchObject({ kind: 'finished', result: { status: 'stoppedAtBudget', budgetStop: { budget: 'cost', limit: 0.0005 } } });
    const last = frame(end, Date.now());
    expect(last).toMatch(/■ budget reached: \$0\.0\d{3} of \$0\.0005 \(at list prices\) \(exit 8\)/);
    expect(last).toContain('resume with --resume --max-cost-usd 0.01');
  });

  it('shows no budget row for a run without one', async () => {
    const { events } = await runDemo();
    const view = viewOf(events);
    expect(frame(view, Date.now())).not.toMatch(/budget/);
  });
});
