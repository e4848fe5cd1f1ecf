/** A read-only tool that returns a picture (a PNG's first bytes, then a pattern): the same bytes in every process. */
import fs from 'node:fs';
import type { ContentBlock } from '../../machines/agent-loop.types.ts';
import { defineTool, type ToolDefinition } from '../../src/tools/tool.ts';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** `bytes` bytes that begin as a PNG does, the rest a pattern of the seed. */
export function pngBytes(bytes: number, seed = 1): Buffer {
  const out = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) out[i] = (i * 7 + seed * 13 + (i >> 9)) & 0xff;
  PNG.copy(out, 0);
  return out;
}

export function imageBlock(data: string, mediaType = 'image/png'): ContentBlock {
  return { type: 'image', source: { type: 'base64', media_type: mediaType, data } };
}

/** `screenshot`: a picture of `bytes` bytes in every call; each run is a line appended to `log` (when given). */
export function screenTool(bytes: number, log?: string): ToolDefinition {
  const data = pngBytes(bytes).toString('base64');
  return defineTool({
    name: 'screenshot',
    description: 'A picture of the screen.',
    readOnly: true,
    inputSchema: { type: 'object' },
    run: (_input, ctx) => {
      if (log) fs.appendFileSync(log, `${ctx.toolUseId}\n`);
      return [{ type: 'text', text: 'the screen:' }, imageBlock(data)];
    },
  });
}
