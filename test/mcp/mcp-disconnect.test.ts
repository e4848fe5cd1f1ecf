/**
 * A server killed in the middle of a call: the call fails as a tool error or is settled by the
 * resume rules at once (the server is restarted, or reconnected, with backoff): read-only and
 * idempotent calls are sent again, a call with a verify tool is checked, any other call's state
 * is reported unknown and not sent again. The run itself does not crash.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { mcpTools, type McpToolSet } from '../../src/mcp/mcp-tools.ts';
import { toolContextFor } from '../../src/tools/execute-call.ts';
import type { ToolDefinition } from '../../src/tools/tool.ts';
import { toolUseReply, endTurnReply } from '../../src/model/scripted-model.ts';
import { effectsOf, type HttpServer, readEffects, startHttpServer, stdioServer } from '../helpers/mcp-servers.ts';
import { mcpRunSetup, TASK, toolResultSent } from '../helpers/mcp-run.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const open: Array<McpToolSet | HttpServer> = [];
afterEach(async () => {
  for (const thing of open.splice(0)) 'close' in thing ? await thing.close() : await thing.stop();
});

const FAST = { reconnectDelaysMs: [50, 300, 1000] };

function tool(set: McpToolSet, name: string): ToolDefinition {
  return set.tools.find((t) => t.name === name)!;
}

function call(definition: ToolDefinition, input: unknown, id = 'toolu_1') {
  return Promise.resolve(definition.run(input, toolContextFor('run-1', { id, name: definition.name, input }, new AbortController().signal)));
}

/** Kills the server process that began `tool` (its pid is in the effect log). */
async function killWhenBegun(effects: string, toolName: string): Promise<number> {
  const begun = await vi.waitFor(
    () => {
      const found = readEffects(effects).find((e) => e.event === 'begin' && e.tool === toolName);
      if (!found) throw new Error(`no effect "begin ${toolName}" in ${effects}: ${fs.existsSync(effects) ? fs.readFileSync(effects, 'utf8') : '(no file)'}`);
      return found;
    },
    { timeout: 15_000, interval: 20 },
  );
  process.kill(begun.pid, 'SIGKILL');
  return begun.pid;
}

describe('a stdio server killed mid-call', () => {
  it('is restarted; a call with a verify tool is checked and, not done, sent again: one effect', async () => {
    const effects = path.join(tempDir(), 'effects.jsonl');
    const log: string[] = [];
    const set = await mcpTools({ mcpServers: { local: { ...stdioServer(effects), reconcile: { append_line: { verify: 'has_appended' } } } } }, { ...FAST, log: (l) => log.push(l) });
    open.push(set);
    const result = call(tool(set, 'mcp__local__append_line'), { line: 'one', waitMs: 1500 });
    const killed = await killWhenBegun(effects, 'append_line');
    expect(await result).toEqual([{ type: 'text', text: 'appended; the list has 1 lines' }]);
    expect(effectsOf(effects, 'append_line')).toHaveLength(1);
    const starts = readEffects(effects).filter((e) => e.event === 'started').map((e) => e.pid);
    expect(starts).toHaveLength(2);
    expect(starts[0]).toBe(killed);
    expect(log.join('\n')).toContain('[mcp] server "local" disconnected; reconnecting on its next call');
    expect(log.join('\n')).toContain('[mcp] server "local" is back');
  });

  it('a call with no annotations and no verify tool: its state is unknown, it is not sent again; the next call goes to the restarted server', async () => {
    const effects = path.join(tempDir(), 'effects.jsonl');
    const set = await mcpTools({ mcpServers: { local: stdioServer(effects) } }, FAST);
    open.push(set);
    const result = call(tool(set, 'mcp__local__bump'), { waitMs: 1500 });
    await killWhenBegun(effects, 'bump');
    await expect(result).rejects.toThrow(/The state of this mcp__local__bump call is unknown: MCP server "local" disconnected while the call ran .*It was not sent again/);
    expect(effectsOf(effects, 'bump')).toHaveLength(0);
    expect(await call(tool(set, 'mcp__local__bump'), {}, 'toolu_2')).toEqual([{ type: 'text', text: 'counter is 1' }]);
  });

  it('a read-only call is sent again', async () => {
    const effects = path.join(tempDir(), 'effects.jsonl');
    const set = await mcpTools({ mcpServers: { local: stdioServer(effects) } }, FAST);
    open.push(set);
    const result = call(tool(set, 'mcp__local__lookup'), { key: 'x', waitMs: 1000 });
    await killWhenBegun(effects, 'lookup');
    expect(await result).toEqual([{ type: 'text', text: 'x=(unset)' }]);
  });
});

describe('a Streamable HTTP server killed mid-call', () => {
  it('an idempotent call is sent again once the server is back on its address', async () => {
    const effects = path.join(tempDir(), 'effects.jsonl');
    const first = await startHttpServer(effects);
    open.push(first);
    // Tries for ~9 s, so a new server process that is slow to start on a loaded machine is still awaited.
    const set = await mcpTools({ mcpServers: { api: { type: 'http', url: first.url } } }, { reconnectDelaysMs: [50, 300, 1000, 2500, 5000] });
    open.push(set);
    const result = call(tool(set, 'mcp__api__set_value'), { key: 'k', value: 'v', waitMs: 1500 });
    await killWhenBegun(effects, 'set_value');
    const again = await startHttpServer(effects, { port: Number(new URL(first.url).port) });
    open.push(again);
    expect(await result).toEqual([{ type: 'text', text: 'k is v' }]);
    expect(effectsOf(effects, 'set_value')).toHaveLength(1);
  });

  it('a server that stays away: the call fails as a tool error saying so', async () => {
    const effects = path.join(tempDir(), 'effects.jsonl');
    const server = await startHttpServer(effects);
    const set = await mcpTools({ mcpServers: { api: { type: 'http', url: server.url } } }, FAST);
    open.push(set);
    await server.stop();
    // A call made in the very instant the server dies cannot know whether it arrived (it is "lost");
    // once the dropped connection is noticed, a call is known not to have been made.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await expect(call(tool(set, 'mcp__api__lookup'), { key: 'x' })).rejects.toThrow(/MCP server "api" could not be reached, so the call was not made/);
  });
});

describe('the CLI run whose stdio server is killed mid-call', () => {
  it('goes on: the model gets an is_error result, the run ends done', async () => {
    const setup = await mcpRunSetup({
      script: [toolUseReply([{ id: 'toolu_01', name: 'mcp__local__bump', input: { waitMs: 2000 } }]), endTurnReply('Noted.')],
    });
    try {
      const running = setup.run([...TASK, '--plain']);
      await killWhenBegun(setup.effects, 'bump');
      const run = await running;
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('[done] Noted.');
      expect(toolResultSent(setup.model, 'toolu_01')).toMatchObject({ is_error: true });
      expect(JSON.stringify(toolResultSent(setup.model, 'toolu_01'))).toContain('disconnected while the call ran');
      expect(run.stderr).toContain('[mcp] server "local" disconnected');
    } finally {
      await setup.stop();
    }
  });
});
