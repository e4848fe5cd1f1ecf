/** `durable-agent run --mcp-config` against the fake Messages API and the test MCP server: the shared setup. */
import fs from 'node:fs';
import path from 'node:path';
import type { ModelReply } from '../../machines/agent-loop.types.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { runCliAsync, type CliRun } from './cli.ts';
import { assistantTurns, FakeAnthropic, type ReceivedRequest } from './fake-anthropic.ts';
import { startHttpServer, stdioServer, type HttpServer } from './mcp-servers.ts';
import { tempDir } from './temp-dir.ts';

export const KEY = 'test-only-key-never-store-me-0123456789';
export const MODEL = 'claude-test-model';
const USAGE = { input: 50, output: 20, cacheRead: 0, cacheWrite: 0 };

/** Four turns, one MCP call each, one of each reconcile rule, then the answer. */
export const MCP_SCRIPT: Array<Omit<ModelReply, 'usage'>> = [
  toolUseReply([{ id: 'toolu_01', name: 'mcp__local__append_line', input: { line: 'one' } }]),
  toolUseReply([{ id: 'toolu_02', name: 'mcp__api__set_value', input: { key: 'k', value: 'v' } }]),
  toolUseReply([{ id: 'toolu_03', name: 'mcp__local__bump', input: {} }]),
  toolUseReply([{ id: 'toolu_04', name: 'mcp__api__lookup', input: { key: 'k' } }]),
  endTurnReply('All four done.'),
];

export interface McpRunSetup {
  dir: string;
  effects: string;
  config: string;
  http: HttpServer;
  model: FakeAnthropic;
  env: Record<string, string>;
  run(args: string[], env?: Record<string, string>): Promise<CliRun>;
  stop(): Promise<void>;
}

export async function mcpRunSetup(
  options: { script?: Array<Omit<ModelReply, 'usage'>>; secret?: string; token?: string; stdioEnv?: Record<string, string> } = {},
): Promise<McpRunSetup> {
  const dir = tempDir();
  const effects = path.join(tempDir(), 'effects.jsonl');
  const http = await startHttpServer(effects, { env: options.token ? { MCP_TEST_TOKEN: options.token } : {} });
  const config = path.join(tempDir(), '.mcp.json');
  const headers = options.token ? { 'x-test-token': options.token } : undefined;
  fs.writeFileSync(
    config,
    JSON.stringify({
      mcpServers: {
        local: {
          ...stdioServer(effects, { ...(options.secret ? { MCP_TEST_SECRET: options.secret } : {}), ...options.stdioEnv }),
          reconcile: { append_line: { verify: 'has_appended' } },
        },
        api: { type: 'http', url: http.url, ...(headers ? { headers } : {}) },
      },
    }),
  );
  const script = options.script ?? MCP_SCRIPT;
  const model = new FakeAnthropic((request: ReceivedRequest) => ({ reply: { ...script[Math.min(assistantTurns(request), script.length - 1)]!, usage: USAGE } }));
  const url = await model.start();
  const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url };
  return {
    dir,
    effects,
    config,
    http,
    model,
    env,
    run: (args, extra = {}) => runCliAsync([...args, '--model', MODEL, '--mcp-config', config], { cwd: dir, env: { ...env, ...extra } }),
    stop: async () => {
      await model.stop();
      await http.stop();
    },
  };
}

export const TASK = ['run', '--task', 'Do the four things.'];
export const RESUME = ['run', '--resume'];

/** The tool_result the model was sent for a tool_use id, in the last request. */
export function toolResultSent(model: FakeAnthropic, id: string): { content: unknown; is_error?: boolean } | undefined {
  const last = model.requests.at(-1);
  for (const message of last?.body.messages ?? []) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type === 'tool_result' && block.tool_use_id === id) return block as unknown as { content: unknown; is_error?: boolean };
    }
  }
  return undefined;
}
