/**
 * mcpTools() against real servers: the filesystem server over stdio and the test server over
 * Streamable HTTP and stdio. Names, schemas, traits from the annotations (and the config's
 * overrides), the idempotency key in `_meta`, results and error results.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { McpConfigFieldError, McpVerifyToolError } from '../../src/mcp/errors.ts';
import { mcpTools, type McpToolSet } from '../../src/mcp/mcp-tools.ts';
import { idempotencyKeyFor, toolContextFor } from '../../src/tools/execute-call.ts';
import type { ToolDefinition } from '../../src/tools/tool.ts';
import { effectsOf, FILESYSTEM_SERVER, type HttpServer, readEffects, startHttpServer, stdioServer } from '../helpers/mcp-servers.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const open: Array<McpToolSet | HttpServer> = [];
afterEach(async () => {
  for (const thing of open.splice(0)) 'close' in thing ? await thing.close() : await thing.stop();
});

function tool(set: McpToolSet, name: string): ToolDefinition {
  const found = set.tools.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name} in ${set.tools.map((t) => t.name).join(', ')}`);
  return found;
}

function call(definition: ToolDefinition, input: unknown, id = 'toolu_1', runId = 'run-1') {
  return definition.run(input, toolContextFor(runId, { id, name: definition.name, input }, new AbortController().signal));
}

describe('the filesystem server over stdio (@modelcontextprotocol/server-filesystem)', () => {
  it('offers its tools as mcp__fs__*, with their schemas and traits from its annotations, and runs them', async () => {
    const dir = tempDir();
    const set = await mcpTools({ mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM_SERVER, dir] } } });
    open.push(set);
    const names = set.tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['mcp__fs__read_text_file', 'mcp__fs__write_file', 'mcp__fs__edit_file', 'mcp__fs__list_directory']));
    const write = tool(set, 'mcp__fs__write_file');
    expect(write).toMatchObject({ readOnly: false, idempotent: true, annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: true } });
    expect(write.inputSchema).toMatchObject({ type: 'object', required: expect.arrayContaining(['path', 'content']) });
    expect(tool(set, 'mcp__fs__edit_file')).toMatchObject({ readOnly: false, idempotent: false });
    expect(tool(set, 'mcp__fs__read_text_file')).toMatchObject({ readOnly: true, idempotent: false });
    expect(tool(set, 'mcp__fs__write_file').traitSources?.idempotent).toBe('idempotentHint: true from MCP server "fs"');

    await call(write, { path: path.join(dir, 'a.txt'), content: 'hello\n' });
    expect(fs.readFileSync(path.join(dir, 'a.txt'), 'utf8')).toBe('hello\n');
    const read = await call(tool(set, 'mcp__fs__read_text_file'), { path: path.join(dir, 'a.txt') });
    expect(read).toEqual([{ type: 'text', text: 'hello\n' }]);
    await expect(call(tool(set, 'mcp__fs__read_text_file'), { path: '/etc/passwd' })).rejects.toThrow(/outside allowed directories|Access denied/);
  });
});

describe('the test server over Streamable HTTP', () => {
  it('gives each combination of annotations its traits; the config overrides them; each call carries its key in _meta', async () => {
    const effects = path.join(tempDir(), 'effects.jsonl');
    const server = await startHttpServer(effects);
    open.push(server);
    const log: string[] = [];
    const set = await mcpTools(
      { mcpServers: { api: { type: 'http', url: server.url, reconcile: { delete_line: { idempotentHint: true }, append_line: { verify: 'has_appended' } } } } },
      { log: (line) => log.push(line) },
    );
    expect(log).toEqual([
      '[mcp] server "api": tool "a_tool_whose_name_is_far_too_long_to_be_offered_to_the_model_at_all" is left out: ' +
        'mcp__api__a_tool_whose_name_is_far_too_long_to_be_offered_to_the_model_at_all is not a tool name the model accepts (1 to 64 letters, digits, "_" or "-")',
    ]);
    open.push(set);
    const traits = Object.fromEntries(set.tools.map((t) => [t.name, [t.readOnly, t.idempotent, typeof t.verify === 'function']]));
    expect(traits).toEqual({
      mcp__api__lookup: [true, false, false],
      mcp__api__set_value: [false, true, false],
      mcp__api__append_line: [false, false, true],
      mcp__api__has_appended: [true, false, false],
      mcp__api__delete_line: [false, true, false], // overridden
      mcp__api__bump: [false, false, false], // no annotations: MCP assumes the worst
      mcp__api__whoami: [true, false, false],
      mcp__api__fail: [true, false, false],
    });
    expect(tool(set, 'mcp__api__delete_line').traitSources?.idempotent).toBe('idempotentHint: true set in the MCP config (mcpServers.api.reconcile.delete_line)');
    expect(tool(set, 'mcp__api__bump').traitSources?.readOnly).toBe('no readOnlyHint from MCP server "api" (MCP assumes false)');

    expect(await call(tool(set, 'mcp__api__append_line'), { line: 'one' }, 'toolu_7', 'run-9')).toEqual([{ type: 'text', text: 'appended; the list has 1 lines' }]);
    expect(effectsOf(effects, 'append_line')).toEqual([expect.objectContaining({ key: idempotencyKeyFor('run-9', 'toolu_7') })]);
    const append = tool(set, 'mcp__api__append_line');
    const context = toolContextFor('run-9', { id: 'toolu_7', name: append.name, input: { line: 'one' } }, new AbortController().signal);
    expect(await append.verify!({ line: 'one' }, context)).toEqual({ happened: true });
    const other = toolContextFor('run-9', { id: 'toolu_8', name: append.name, input: { line: 'one' } }, new AbortController().signal);
    expect(await append.verify!({ line: 'one' }, other)).toEqual({ happened: false });
    await expect(call(tool(set, 'mcp__api__fail'), {})).rejects.toThrow('this tool always fails');
  });
});

describe('the test server over stdio', () => {
  it('starts one process per server and stops it on close()', async () => {
    const effects = path.join(tempDir(), 'effects.jsonl');
    const set = await mcpTools({ mcpServers: { local: stdioServer(effects) } });
    expect(await call(tool(set, 'mcp__local__bump'), {})).toEqual([{ type: 'text', text: 'counter is 1' }]);
    const [started] = readEffects(effects).filter((e) => e.event === 'started');
    await set.close();
    await vi.waitFor(() => expect(() => process.kill(started!.pid, 0)).toThrow(), { timeout: 30_000, interval: 50 });
  });
});

describe('reconcile settings that do not fit the server', () => {
  it('a setting for a tool the server does not offer, or a verify tool it does not offer, is refused and the server stopped', async () => {
    const effects = path.join(tempDir(), 'effects.jsonl');
    await expect(mcpTools({ mcpServers: { local: { ...stdioServer(effects), reconcile: { apend_line: { idempotentHint: true } } } } })).rejects.toThrow(
      McpConfigFieldError,
    );
    await expect(mcpTools({ mcpServers: { local: { ...stdioServer(effects), reconcile: { apend_line: { idempotentHint: true } } } } })).rejects.toThrow(
      'the MCP config: mcpServers.local.reconcile.apend_line names a tool server "local" does not offer (it offers: lookup, set_value, append_line,',
    );
    await expect(mcpTools({ mcpServers: { local: { ...stdioServer(effects), reconcile: { append_line: { verify: 'was_appended' } } } } })).rejects.toThrow(
      McpVerifyToolError,
    );
    await vi.waitFor(() => {
      for (const { pid } of readEffects(effects).filter((e) => e.event === 'started')) expect(() => process.kill(pid, 0)).toThrow();
    }, { timeout: 30_000, interval: 50 });
  });
});
