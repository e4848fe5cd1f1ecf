/**
 * The secrets the process knows never reach the ledger through a tool, of any kind: what a
 * built-in file tool read, what a tool threw, the text inside rich blocks. The journal's bytes on
 * disk (and the rows of PostgreSQL) hold `[redacted]`, and so does what the model is sent.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ContentBlock, Message, ModelReply, ToolResultBlock } from '../../machines/agent-loop.types.ts';
import { FileStore, startRun } from '../../src/index.ts';
import type { RunStore } from '../../src/store/store.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/testing.ts';
import { fileTools } from '../../src/tools/file-tools.ts';
import { defineTool, type ToolDefinition } from '../../src/tools/tool.ts';
import { addSecrets, REDACTED } from '../../src/util/redact.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { pool, postgresAvailable, usePostgres } from '../helpers/use-postgres.ts';

// Built at run time: a committed string shaped like a key would trip secret scanners.
const KEY = `${['sk', 'ant', 'test'].join('-')}-0123456789abcdefghijklmnop`;
/** A secret of no known shape: only its value tells it (an MCP server's env, a webhook secret). */
const ADDED = 'q7VfT2mZx9LpR4wK';
const CONSOLE_SECRET = 'console-secret-7f3a9c1e55';

let savedKey: string | undefined;
let savedToken: string | undefined;
beforeEach(() => {
  savedKey = process.env.ANTHROPIC_API_KEY;
  savedToken = process.env.DURABLE_AGENT_CONSOLE_TOKEN;
  process.env.ANTHROPIC_API_KEY = KEY;
  process.env.DURABLE_AGENT_CONSOLE_TOKEN = `alice:${CONSOLE_SECRET}`;
});
afterEach(() => {
  for (const [name, value] of [['ANTHROPIC_API_KEY', savedKey], ['DURABLE_AGENT_CONSOLE_TOKEN', savedToken]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** A model that calls one tool, then ends; `seen` gets the tool_result it was sent. */
function oneCall(name: string, input: Record<string, unknown>, seen: ToolResultBlock[]) {
  const after = (messages: readonly Message[]): ModelReply => {
    const last = messages[messages.length - 1]!;
    for (const block of last.content as ContentBlock[]) if (block.type === 'tool_result') seen.push(block as ToolResultBlock);
    return endTurnReply('done');
  };
  return scriptedModel([toolUseReply([{ id: 'toolu_1', name, input }]), after]);
}

/** A workdir with a file holding every secret the process knows. */
function workdirWithSecrets(): string {
  const dir = tempDir('da-secrets-');
  fs.writeFileSync(path.join(dir, 'env.txt'), `ANTHROPIC_API_KEY=${KEY}\nother=${ADDED}\nconsole=${CONSOLE_SECRET}\n`);
  return dir;
}

const thrower: ToolDefinition = defineTool<Record<string, unknown>>({
  name: 'echo_env',
  description: 'Fails with the key in its message.',
  inputSchema: { type: 'object', properties: {} },
  readOnly: false,
  run: () => {
    throw new Error(`upstream said: bad key ${KEY} (and ${ADDED}, ${CONSOLE_SECRET})`);
  },
});

const richBlocks: ToolDefinition = defineTool<Record<string, unknown>>({
  name: 'rich',
  description: 'Returns blocks with the secrets in their text.',
  inputSchema: { type: 'object', properties: {} },
  readOnly: true,
  run: () => [
    { type: 'text', text: `key ${KEY}` },
    { type: 'document', source: { type: 'text', media_type: 'text/plain', data: `secret ${ADDED}` }, title: `for ${CONSOLE_SECRET}` },
  ],
});

function expectNoSecret(text: string): void {
  expect(text).not.toContain(KEY);
  expect(text).not.toContain(ADDED);
  expect(text).not.toContain(CONSOLE_SECRET);
}

/** Every byte the run's folder holds (journal, blobs, snapshots). */
function folderBytes(dir: string): string {
  return (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => fs.readFileSync(path.join(entry.parentPath, entry.name), 'utf8'))
    .join('\n');
}

async function runOne(store: RunStore, tools: ToolDefinition[], name: string, input: Record<string, unknown>): Promise<ToolResultBlock> {
  addSecrets([ADDED]);
  const seen: ToolResultBlock[] = [];
  const result = await startRun({ store, model: oneCall(name, input, seen), tools, task: `call ${name}` });
  expect(result.status).toBe('done');
  expect(seen).toHaveLength(1);
  expectNoSecret(JSON.stringify(seen[0]));
  expect(JSON.stringify(seen[0])).toContain(REDACTED);
  return seen[0]!;
}

describe('secrets out of tool results, on the file store', () => {
  it('read_file of a file holding the API key: the journal bytes hold [redacted], and so does the model', async () => {
    const dir = workdirWithSecrets();
    const state = path.join(tempDir(), '.durable-agent');
    const sent = await runOne(new FileStore(state), fileTools(dir), 'read_file', { path: 'env.txt' });
    expect(sent.content).toBe(`ANTHROPIC_API_KEY=${REDACTED}\nother=${REDACTED}\nconsole=${REDACTED}\n`);
    const bytes = folderBytes(state);
    expectNoSecret(bytes);
    expect(bytes).toContain(`ANTHROPIC_API_KEY=${REDACTED}`);
  });

  it('a tool that throws with the key in its message: recorded and sent redacted', async () => {
    const state = path.join(tempDir(), '.durable-agent');
    const sent = await runOne(new FileStore(state), [thrower], 'echo_env', {});
    expect(sent.is_error).toBe(true);
    expectNoSecret(folderBytes(state));
  });

  it('text inside rich blocks (a text block, a text document and its title): redacted', async () => {
    const state = path.join(tempDir(), '.durable-agent');
    await runOne(new FileStore(state), [richBlocks], 'rich', {});
    expectNoSecret(folderBytes(state));
  });
});

describe.skipIf(!postgresAvailable())('secrets out of tool results, on PostgreSQL', () => {
  usePostgres();

  async function rowsOf(runId: string): Promise<string> {
    const tables = ['da_runs', 'da_records'];
    const texts: string[] = [];
    for (const table of tables) {
      const column = table === 'da_runs' ? 'id' : 'run_id';
      const rows = await pool.query(`SELECT * FROM ${table} WHERE ${column} = $1`, [runId]);
      texts.push(JSON.stringify(rows.rows));
    }
    return texts.join('\n');
  }

  it('read_file, a throw and rich blocks: the rows hold [redacted]', async () => {
    const dir = workdirWithSecrets();
    await runOne(new PgRunStore(pool, 'secrets-read', { leaseMs: 60_000 }), fileTools(dir), 'read_file', { path: 'env.txt' });
    await runOne(new PgRunStore(pool, 'secrets-throw', { leaseMs: 60_000 }), [thrower], 'echo_env', {});
    await runOne(new PgRunStore(pool, 'secrets-rich', { leaseMs: 60_000 }), [richBlocks], 'rich', {});
    for (const id of ['secrets-read', 'secrets-throw', 'secrets-rich']) {
      const rows = await rowsOf(id);
      expect(rows).toContain('toolu_1');
      expectNoSecret(rows);
    }
  });
});
