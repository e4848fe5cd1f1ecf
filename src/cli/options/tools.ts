/** Which tools `run` offers, and how the calls of one reply are run: how many at once, and for how long each. */
import { UsageError } from '../usage-error.ts';
import { option } from './option.ts';
import { shorten } from './read-options.ts';

export const toolConcurrency = option({
  key: 'toolConcurrency',
  type: 'integer',
  value: 'N',
  help: "how many read-only calls of one reply run at once; other calls run alone, in the model's order (1: one call at a time)",
  min: 1,
  max: 64,
  defaultText: '4',
  api: 'RunParts.toolConcurrency',
});
export const toolTimeout = option({
  key: 'toolTimeoutMs',
  type: 'duration',
  value: 'DURATION',
  help: "time limit of one tool call where the tool sets none; past it ctx.signal aborts and the model gets an error result",
  min: 1_000,
  max: 24 * 3_600_000,
  defaultText: '2m',
  api: 'RunParts.toolTimeoutMs',
});

/** The tool sets `run --tools` offers; the file tools are the default. */
export const TOOL_SETS = ['files', 'text-editor', 'memory', 'bash', 'wait'] as const;
export type ToolSetName = (typeof TOOL_SETS)[number];

export const tools = option({
  key: 'tools',
  type: 'string',
  value: 'SETS',
  help:
    "the tools Claude gets, separated by commas: files (list_files, read_file, write_file in DIR), text-editor (Claude's " +
    'text editor on DIR), memory (files under DIR/memories), bash (a shell in DIR: no sandbox, it can reach outside DIR), ' +
    'wait (sleep until a time or an event `durable-agent signal` sends); ' +
    'a resume takes the run’s own',
  defaultText: 'files',
  api: 'StartOptions.tools',
});

/** `text-editor,memory` as the sets it names, each once, in the order given. */
export function readToolSets(text: string | undefined): ToolSetName[] | undefined {
  if (text === undefined) return undefined;
  const names = text.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(TOOL_SETS as readonly string[]).includes(name));
  if (unknown.length) {
    const shown = unknown.map((name) => `"${shorten(name)}"`).join(', ');
    throw new UsageError(`--tools takes ${TOOL_SETS.join(', ')}, separated by commas (e.g. --tools text-editor,memory), not ${shown}.`);
  }
  return [...new Set(names as ToolSetName[])];
}
