/**
 * What a run pins of each tool's contract: the hash of its input schema, and for a tool the
 * Messages API defines, of its type and options too (text_editor_20250429 and _20250728 take
 * different input, the same schema of ours may not follow). A tool of our own hashes exactly as
 * it always has, so the runs already stored resume unchanged.
 */
import { schemaHash } from './schema-hash.ts';
import type { ToolDefinition } from './tool.ts';

export function toolContractHash(tool: Pick<ToolDefinition, 'inputSchema' | 'anthropicDefined'>): string {
  const defined = tool.anthropicDefined;
  if (!defined) return schemaHash(tool.inputSchema);
  return schemaHash({ anthropicDefined: { type: defined.type, options: defined.options ?? {} }, inputSchema: tool.inputSchema });
}
