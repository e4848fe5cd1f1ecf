/**
 * The tools of `durable-agent run`, by the sets --tools names. The sets a run started with are
 * kept in its journal's header, as the names of the tools it pins (each set has tools of its own
 * names): a resume and the decision commands read them there, so they offer the run the tools it
 * started with without being told again.
 */
import { waitTool } from '../awaits/wait-tool.ts';
import { bashTool } from '../tools/anthropic/bash.ts';
import { memoryTool } from '../tools/anthropic/memory.ts';
import { textEditorTool } from '../tools/anthropic/text-editor.ts';
import { fileTools } from '../tools/file-tools.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { TOOL_SETS, type ToolSetName } from './options/tools.ts';

export const DEFAULT_TOOL_SETS: readonly ToolSetName[] = ['files'];

export interface RunToolSettings {
  /** A bash command's time limit (the run's --tool-timeout; default bash's own). */
  bashTimeoutMs?: number | undefined;
}

export function toolsOfSets(dir: string, sets: readonly ToolSetName[], settings: RunToolSettings = {}): ToolDefinition[] {
  // biome-ignore lint/suspicious/useIterableCallbackReturn: the switch names every ToolSetName (tsc checks it), so each set returns
  return sets.flatMap((set): ToolDefinition[] => {
    switch (set) {
      case 'files':
        return fileTools(dir);
      case 'text-editor':
        return [textEditorTool(dir)];
      case 'memory':
        return [memoryTool(dir)];
      case 'bash':
        return [bashTool(dir, { timeoutMs: settings.bashTimeoutMs })];
      case 'wait':
        return [waitTool()];
    }
  });
}

/**
 * The sets whose tools a run's header names, in the order they were given; the file tools for
 * a run that names none of them (one started before --tools, which had them only).
 */
export function toolSetsOfRun(toolNames: readonly string[]): ToolSetName[] {
  const at = (set: ToolSetName) => Math.min(...toolsOfSets('.', [set]).map((tool) => (toolNames.includes(tool.name) ? toolNames.indexOf(tool.name) : Infinity)));
  const sets = TOOL_SETS.filter((set) => at(set) !== Infinity).sort((a, b) => at(a) - at(b));
  return sets.length ? sets : [...DEFAULT_TOOL_SETS];
}
