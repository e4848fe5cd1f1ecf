/** A long, plain run for the visualizer's tests and bench: N turns of one read-only lookup each. */
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import type { RunStore } from '../../src/store/store.ts';
import { defineTool } from '../../src/tools/tool.ts';

export const LOOKUP_TASK = 'Look them up.';
export const LOOKUP_DONE = 'looked up';

/** Runs `turns` tool-using turns (call ids toolu_0…), each result `entry N` followed by `padding`. */
export async function lookupRun(store: RunStore, turns: number, padding = ''): Promise<void> {
  const lookup = defineTool<{ n: number }>({
    name: 'lookup',
    description: 'Look a number up.',
    inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    readOnly: true,
    async run({ n }) {
      return `entry ${n}${padding}`;
    },
  });
  const replies = Array.from({ length: turns }, (_, i) => toolUseReply([{ id: `toolu_${i}`, name: 'lookup', input: { n: i } }]));
  await startRun({ store, model: scriptedModel([...replies, endTurnReply(LOOKUP_DONE)]), tools: [lookup], task: LOOKUP_TASK, maxTurns: turns });
}
