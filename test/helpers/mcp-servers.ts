/** The test MCP server (./mcp-test-server.mjs) as a stdio config entry or a running HTTP server, and its effect log. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const TEST_SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'mcp-test-server.mjs');
export const FILESYSTEM_SERVER = path.resolve(path.dirname(TEST_SERVER), '../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');

export interface Effect {
  pid: number;
  event: 'started' | 'begin' | 'read' | 'effect';
  tool?: string;
  key?: string | null;
  input?: Record<string, unknown>;
}

export function readEffects(file: string): Effect[] {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Effect);
}

export function effectsOf(file: string, tool: string): Effect[] {
  return readEffects(file).filter((e) => e.event === 'effect' && e.tool === tool);
}

export function stdioServer(effects: string, env: Record<string, string> = {}) {
  return { command: process.execPath, args: [TEST_SERVER, 'stdio'], env: { MCP_TEST_EFFECTS: effects, ...env } };
}

export interface HttpServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts the test server over Streamable HTTP on 127.0.0.1 (port 0: any free one). */
export async function startHttpServer(effects: string, options: { port?: number; env?: Record<string, string> } = {}): Promise<HttpServer> {
  const child = spawn(process.execPath, [TEST_SERVER, 'http', String(options.port ?? 0)], {
    env: { ...process.env, MCP_TEST_EFFECTS: effects, ...options.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const found = /listening (\S+)/.exec(out);
      if (found) resolve(found[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the test MCP server exited (${code}) before listening`)));
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  };
  return { url, child, stop };
}
