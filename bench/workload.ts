/**
 * The benchmark's agent run: T tool-using turns, each reading one page that returns ~2 KB of
 * text, then a final answer. Scripted and deterministic, so every contender runs exactly the
 * same conversation and a resumed process gets exactly the replies the first one would have.
 */
import type { Message } from '../machines/agent-loop.types.ts';
import { endTurnReply, scriptedModel, type ScriptedStep, toolUseReply } from '../src/model/scripted-model.ts';
import type { RunObserver } from '../src/core/run-events.ts';
import type { StartOptions } from '../src/runtime/run-api.ts';
import type { RunStore } from '../src/store/store.ts';
import { defineTool } from '../src/tools/tool.ts';

export const TOOL_RESULT_BYTES = 2048;
const WORDS = ['order', 'shipment', 'invoice', 'customer', 'region', 'quarter', 'margin', 'forecast', 'churn', 'renewal', 'pipeline', 'discount', 'north', 'south', 'delayed', 'closed', 'pending', 'priority'];
/** Distinct page texts, so records do not all look alike; a page is picked by its number. */
const PAGE_TEXTS = Array.from({ length: 32 }, (_, i) => pseudoText(i + 1, TOOL_RESULT_BYTES));

function pseudoText(seed: number, bytes: number): string {
  let state = seed * 2654435761;
  const words: string[] = [];
  let length = 0;
  while (length < bytes) {
    state = (state * 1103515245 + 12345) >>> 0;
    const word = WORDS[state % WORDS.length]!;
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ').slice(0, bytes);
}

/** What the tool returns for a page: ~2 KB of text, different from page to page. */
export function pageText(page: number): string {
  return `page ${page}: ${PAGE_TEXTS[page % PAGE_TEXTS.length]!}`;
}

export const fetchPage = defineTool<{ page: number }>({
  name: 'fetch_page',
  description: 'Returns the text of one page of the sales notes (about 2 KB).',
  inputSchema: { type: 'object', properties: { page: { type: 'integer' } }, required: ['page'] },
  readOnly: true,
  run: ({ page }) => pageText(page),
});

/** The model's replies for a T-turn run; built once per T and shared by every contender. */
export function benchScript(turns: number): ScriptedStep[] {
  const steps: ScriptedStep[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    steps.push(toolUseReply([{ id: `toolu_bench_${turn}`, name: 'fetch_page', input: { page: turn } }], `Reading page ${turn}.`));
  }
  steps.push(endTurnReply(`Read all ${turns} pages; the notes are summarised.`));
  return steps;
}

export function benchRunOptions(store: RunStore, script: ScriptedStep[], observer?: RunObserver): StartOptions {
  const turns = script.length - 1;
  return {
    store,
    model: scriptedModel(script, { name: 'bench-scripted' }),
    tools: [fetchPage],
    task: `Read the ${turns} pages of sales notes and summarise them.`,
    maxTurns: turns,
    observer,
  };
}

/**
 * Bytes of new conversation per tool-using turn: the assistant message that names the tool and
 * the user message that carries its result, as JSON. This is what any store has to write at
 * least once; the first (task) and last (final answer) messages are left out.
 */
export function contentBytesPerTurn(messages: readonly Message[], turns: number): number {
  let bytes = 0;
  for (const message of messages.slice(1, 1 + 2 * turns)) bytes += Buffer.byteLength(JSON.stringify(message));
  return bytes / turns;
}
