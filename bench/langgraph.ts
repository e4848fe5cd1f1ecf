/**
 * LangGraph.js as a contender: the bench's scripted conversation run as the textbook LangGraph
 * tool agent (a StateGraph over MessagesAnnotation, an "agent" node that returns the script's
 * reply, the prebuilt ToolNode running fetch_page, toolsCondition between them), checkpointed
 * into a SQLite file by @langchain/langgraph-checkpoint-sqlite in its most durable setting:
 * `durability: "sync"` (each step's checkpoint and writes stored before the next step starts)
 * and SQLite's `synchronous = FULL` (each commit fsynced; the saver itself puts the file in WAL
 * mode). Installed on demand, at pinned versions, into a scratch folder outside the repository
 * (never a dependency of the package; better-sqlite3 may build from source there, which takes
 * minutes); when it cannot be installed or loaded, the bench says why and goes on without it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ModelReply } from '../machines/agent-loop.types.ts';
import type { ScriptedStep } from '../src/model/scripted-model.ts';
import { fetchPage, pageText } from './workload.ts';

/** The versions measured; the peers are pinned too, so that a later install measures the same code. */
export const LANGGRAPH_PACKAGES = {
  '@langchain/langgraph': '1.7.3',
  '@langchain/langgraph-checkpoint-sqlite': '1.0.4',
  '@langchain/langgraph-checkpoint': '1.2.2',
  '@langchain/core': '1.4.0',
  'better-sqlite3': '12.11.1',
} as const;

type PackageName = keyof typeof LANGGRAPH_PACKAGES;

export const LANGGRAPH_SCRATCH = path.join(os.tmpdir(), 'durable-agent-bench-langgraph');

/** The setting measured, as the report prints it. */
export const LANGGRAPH_SETTING = 'StateGraph(MessagesAnnotation) + prebuilt ToolNode, SqliteSaver on a file, durability "sync", SQLite journal_mode=WAL synchronous=FULL';

export class LangGraphUnavailableError extends Error {
  override readonly name = 'LangGraphUnavailableError';
  constructor(readonly why: string) {
    super(why);
  }
}

/** What the bench uses of the packages (loaded at run time from the scratch folder, so typed here). */
interface GraphBuilder {
  addNode(name: string, node: unknown): GraphBuilder;
  addEdge(from: string, to: string): GraphBuilder;
  addConditionalEdges(from: string, route: unknown): GraphBuilder;
  compile(options: { checkpointer: unknown }): { invoke(input: unknown, config: Record<string, unknown>): Promise<{ messages: unknown[] }> };
}

interface SqliteDatabase {
  pragma(source: string, options?: { simple: boolean }): unknown;
  prepare(sql: string): { get(): Record<string, unknown> | undefined };
  close(): void;
}

interface LangGraphModules {
  StateGraph: new (state: unknown) => GraphBuilder;
  MessagesAnnotation: unknown;
  START: string;
  ToolNode: new (tools: unknown[]) => unknown;
  toolsCondition: unknown;
  AIMessage: new (fields: { content: string; tool_calls?: unknown[] }) => unknown;
  HumanMessage: new (content: string) => unknown;
  tool: (run: (input: { page: number }) => string, fields: { name: string; description: string; schema: unknown }) => unknown;
  SqliteSaver: { fromConnString(file: string): { db: SqliteDatabase } };
}

export interface LangGraphRun {
  ms: number;
  cpuMs: number;
  /** Checkpoints and pending-write rows the saver stored, and the size of its folder once the database is closed (its WAL folded in). */
  checkpoints: number;
  writes: number;
  fileBytes: number;
}

export interface LangGraphContender {
  /** Each package's installed version, and SQLite's. */
  versions: Record<PackageName | 'sqlite', string>;
  /** Runs the script's conversation as one graph invocation, checkpointed into a new SQLite file in `dir`. */
  run(dir: string, script: readonly ScriptedStep[]): Promise<LangGraphRun>;
}

const MANIFEST = path.join(LANGGRAPH_SCRATCH, 'package.json');

function installedVersion(name: PackageName): string | null {
  try {
    return (JSON.parse(fs.readFileSync(path.join(LANGGRAPH_SCRATCH, 'node_modules', ...name.split('/'), 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return null;
  }
}

/** Installs the pinned packages into the scratch folder unless they are there already. */
function install(log: (line: string) => void): void {
  const names = Object.keys(LANGGRAPH_PACKAGES) as PackageName[];
  if (names.every((name) => installedVersion(name) === LANGGRAPH_PACKAGES[name])) return;
  fs.mkdirSync(LANGGRAPH_SCRATCH, { recursive: true });
  if (!fs.existsSync(MANIFEST)) fs.writeFileSync(MANIFEST, `${JSON.stringify({ name: 'durable-agent-bench-langgraph', private: true }, null, 2)}\n`);
  const specs = names.map((name) => `${name}@${LANGGRAPH_PACKAGES[name]}`);
  log(`installing ${specs.join(' ')} into ${LANGGRAPH_SCRATCH} (outside the repository; better-sqlite3 may build from source, minutes)`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error', '--save-exact', ...specs], { cwd: LANGGRAPH_SCRATCH, encoding: 'utf8', timeout: 900_000 });
  if (result.status !== 0) throw new LangGraphUnavailableError(`npm install of LangGraph.js failed (${result.error?.message ?? (result.stderr.trim().split('\n').at(-1) || `exit ${result.status}`)}); run the bench with --no-langgraph to leave it out`);
}

/** Loads every package through one CommonJS require, so that all of them share one copy of @langchain/core (its classes are checked with instanceof). */
function load(): LangGraphModules {
  const require = createRequire(MANIFEST);
  try {
    const graph = require('@langchain/langgraph');
    const prebuilt = require('@langchain/langgraph/prebuilt');
    const messages = require('@langchain/core/messages');
    const tools = require('@langchain/core/tools');
    const sqlite = require('@langchain/langgraph-checkpoint-sqlite');
    return {
      StateGraph: graph.StateGraph,
      MessagesAnnotation: graph.MessagesAnnotation,
      START: graph.START,
      ToolNode: prebuilt.ToolNode,
      toolsCondition: prebuilt.toolsCondition,
      AIMessage: messages.AIMessage,
      HumanMessage: messages.HumanMessage,
      tool: tools.tool,
      SqliteSaver: sqlite.SqliteSaver,
    };
  } catch (error) {
    throw new LangGraphUnavailableError(`LangGraph.js could not be loaded from ${LANGGRAPH_SCRATCH} (${(error as Error).message}); run the bench with --no-langgraph to leave it out`);
  }
}

/** The script's reply as LangGraph's AIMessage: the text blocks as its content, the tool_use blocks as its tool calls. */
function aiMessageOf(modules: LangGraphModules, reply: ModelReply): unknown {
  const text = reply.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
  const calls = reply.content.flatMap((block) => (block.type === 'tool_use' ? [{ id: block.id, name: block.name, args: block.input, type: 'tool_call' }] : []));
  return new modules.AIMessage({ content: text, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
}

/** Installs (when needed) and loads LangGraph.js. */
export function startLangGraph(log: (line: string) => void): LangGraphContender {
  install(log);
  const modules = load();
  const pageTool = modules.tool(({ page }) => pageText(page), {
    name: fetchPage.name,
    description: fetchPage.description,
    schema: fetchPage.inputSchema,
  });
  let sqlite: string;
  try {
    // Opening a database loads better-sqlite3's native binding: a build that failed shows here.
    const probe = modules.SqliteSaver.fromConnString(':memory:').db;
    sqlite = String(probe.prepare('select sqlite_version() as version').get()?.version);
    probe.close();
  } catch (error) {
    throw new LangGraphUnavailableError(`better-sqlite3 in ${LANGGRAPH_SCRATCH} cannot open a database (${(error as Error).message}); run the bench with --no-langgraph to leave it out`);
  }
  const versions = { ...Object.fromEntries((Object.keys(LANGGRAPH_PACKAGES) as PackageName[]).map((name) => [name, installedVersion(name) ?? '?'])), sqlite } as LangGraphContender['versions'];
  return {
    versions,
    async run(dir, script) {
      const turns = script.length - 1;
      fs.mkdirSync(dir, { recursive: true });
      const saver = modules.SqliteSaver.fromConnString(path.join(dir, 'checkpoints.sqlite'));
      // better-sqlite3's build already defaults to FULL; said here so that the setting measured does not hang on a build flag.
      saver.db.pragma('synchronous = FULL');
      let step = 0;
      const agent = async () => {
        const reply = script[step++];
        if (reply === undefined || typeof reply === 'function') throw new Error(`LangGraph agent: no scripted reply for step ${step}`);
        return { messages: [aiMessageOf(modules, reply)] };
      };
      const graph = new modules.StateGraph(modules.MessagesAnnotation)
        .addNode('agent', agent)
        .addNode('tools', new modules.ToolNode([pageTool]))
        .addEdge(modules.START, 'agent')
        .addConditionalEdges('agent', modules.toolsCondition)
        .addEdge('tools', 'agent')
        .compile({ checkpointer: saver });
      const task = `Read the ${turns} pages of sales notes and summarise them.`;
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const result = await graph.invoke({ messages: [new modules.HumanMessage(task)] }, {
        configurable: { thread_id: 'bench' },
        durability: 'sync',
        recursionLimit: 2 * turns + 5,
      });
      const ms = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      const count = (table: string) => Number(saver.db.prepare(`select count(*) as n from ${table}`).get()?.n);
      const synchronous = saver.db.pragma('synchronous', { simple: true });
      const journalMode = saver.db.pragma('journal_mode', { simple: true });
      const checkpoints = count('checkpoints');
      const writes = count('writes');
      saver.db.close();
      if (synchronous !== 2 || journalMode !== 'wal') throw new Error(`LangGraph run: SQLite ran with synchronous=${String(synchronous)}, journal_mode=${String(journalMode)}, not FULL and wal`);
      if (result.messages.length !== 2 * turns + 2 || step !== turns + 1) throw new Error(`LangGraph run: ${result.messages.length} messages after ${step} agent steps, expected ${2 * turns + 2} after ${turns + 1}`);
      const fileBytes = fs.readdirSync(dir).reduce((sum, name) => sum + fs.statSync(path.join(dir, name)).size, 0);
      return { ms, cpuMs: (cpu.user + cpu.system) / 1000, checkpoints, writes, fileBytes };
    },
  };
}
