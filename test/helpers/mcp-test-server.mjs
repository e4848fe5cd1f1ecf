/**
 * A real MCP server for the tests, written with the SDK's low-level Server so that each tool's
 * annotations are exactly as written here (one tool per combination). Run it over stdio
 * (`node mcp-test-server.mjs stdio`) or Streamable HTTP (`node mcp-test-server.mjs http [PORT]`,
 * which prints `listening http://127.0.0.1:PORT/mcp`).
 *
 * Every effect is appended, as one JSON line, to $MCP_TEST_EFFECTS (with the idempotency key
 * the call carried in `_meta`), so a test can count what happened and how often. A call with
 * `waitMs` writes a `begin` line first and waits before its effect: a test kills the server then.
 * MCP_TEST_VARIANT=changed offers a changed list: set_value's schema, lookup's annotations,
 * bump gone. MCP_TEST_SECRET (env) is echoed by `whoami` only as its length. MCP_TEST_IMAGES=1 adds
 * `screenshot`, which answers with bytes: an image (`kind` png, the default), a PDF as an embedded
 * resource (pdf), or audio (wav), `bytes` long, the same bytes for the same input.
 */
import fs from 'node:fs';
import http from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const EFFECTS = process.env.MCP_TEST_EFFECTS;
const STATE = process.env.MCP_TEST_STATE ?? (EFFECTS ? `${EFFECTS}.state.json` : null);
const changed = process.env.MCP_TEST_VARIANT === 'changed';
const images = process.env.MCP_TEST_IMAGES === '1';

const MAGIC = { png: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pdf: Buffer.from('%PDF-1.4\n'), wav: Buffer.from('RIFF') };

/** `bytes` bytes that start as a file of `kind` does, the rest a pattern of the input. */
function fileBytes(kind, bytes) {
  const out = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) out[i] = (i * 31 + bytes) & 0xff;
  MAGIC[kind].copy(out, 0);
  return out.toString('base64');
}

function screenshot({ bytes = 1000, kind = 'png' }) {
  const data = fileBytes(kind, bytes);
  const said = { type: 'text', text: `a ${kind} of ${bytes} bytes` };
  if (kind === 'pdf') return { content: [said, { type: 'resource', resource: { uri: 'file:///report.pdf', mimeType: 'application/pdf', blob: data } }] };
  if (kind === 'wav') return { content: [said, { type: 'audio', data, mimeType: 'audio/wav' }] };
  return { content: [said, { type: 'image', data, mimeType: 'image/png' }] };
}

function note(entry) {
  if (EFFECTS) fs.appendFileSync(EFFECTS, `${JSON.stringify({ pid: process.pid, ...entry })}\n`);
}

function effects() {
  if (!EFFECTS || !fs.existsSync(EFFECTS)) return [];
  return fs.readFileSync(EFFECTS, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

function state() {
  return STATE && fs.existsSync(STATE) ? JSON.parse(fs.readFileSync(STATE, 'utf8')) : { values: {}, lines: [], counter: 0 };
}

function save(next) {
  if (STATE) fs.writeFileSync(STATE, JSON.stringify(next));
}

const text = (value) => ({ content: [{ type: 'text', text: value }] });
const withWait = (properties) => ({ ...properties, waitMs: { type: 'integer', minimum: 0 } });

const TOOLS = [
  {
    name: 'lookup',
    description: 'Read a value by key.',
    inputSchema: { type: 'object', properties: withWait({ key: { type: 'string' } }), required: ['key'] },
    annotations: changed ? { readOnlyHint: false, destructiveHint: true } : { readOnlyHint: true },
    run: ({ key }) => text(`${key}=${state().values[key] ?? '(unset)'}`),
  },
  {
    name: 'set_value',
    description: 'Set a key to a value (setting it again changes nothing more).',
    inputSchema: changed
      ? { type: 'object', properties: withWait({ key: { type: 'string' }, value: { type: 'string' }, ttl: { type: 'integer' } }), required: ['key', 'value', 'ttl'] }
      : { type: 'object', properties: withWait({ key: { type: 'string' }, value: { type: 'string' } }), required: ['key', 'value'] },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    effect: ({ key, value }) => {
      const s = state();
      s.values[key] = value;
      save(s);
      return text(`${key} is ${value}`);
    },
  },
  {
    name: 'append_line',
    description: 'Append a line to the list (each call appends once more).',
    inputSchema: { type: 'object', properties: withWait({ line: { type: 'string' } }), required: ['line'] },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    effect: ({ line }) => {
      const s = state();
      s.lines.push(line);
      save(s);
      return text(`appended; the list has ${s.lines.length} lines`);
    },
  },
  {
    name: 'has_appended',
    description: 'Whether the append_line call with this idempotency key took effect (a verify tool).',
    inputSchema: { type: 'object', properties: withWait({ line: { type: 'string' } }), required: ['line'] },
    annotations: { readOnlyHint: true },
    run: (_input, key) => {
      const happened = effects().some((e) => e.event === 'effect' && e.tool === 'append_line' && e.key === key);
      return { content: [{ type: 'text', text: String(happened) }], structuredContent: { happened } };
    },
  },
  {
    name: 'delete_line',
    description: 'Delete the last line of the list.',
    inputSchema: { type: 'object', properties: withWait({}) },
    annotations: { destructiveHint: true, idempotentHint: false },
    effect: () => {
      const s = state();
      const gone = s.lines.pop();
      save(s);
      return text(gone === undefined ? 'the list was empty' : `deleted ${gone}`);
    },
  },
  ...(changed
    ? []
    : [
        {
          name: 'bump',
          description: 'Add one to the counter (no annotations at all).',
          inputSchema: { type: 'object', properties: withWait({}) },
          effect: () => {
            const s = state();
            s.counter += 1;
            save(s);
            return text(`counter is ${s.counter}`);
          },
        },
      ]),
  {
    name: 'whoami',
    description: 'Says how long the secret in the environment is.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
    run: () => text(`secret length ${(process.env.MCP_TEST_SECRET ?? '').length}`),
  },
  {
    // With the server's name in front, longer than the 64 characters a tool name may have: left out.
    name: 'a_tool_whose_name_is_far_too_long_to_be_offered_to_the_model_at_all',
    description: 'Never offered.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
    run: () => text('unreachable'),
  },
  ...(images
    ? [
        {
          name: 'screenshot',
          description: 'Take a picture (or a PDF, or a sound) of the given size.',
          inputSchema: { type: 'object', properties: { bytes: { type: 'integer', minimum: 16 }, kind: { type: 'string', enum: ['png', 'pdf', 'wav'] } } },
          annotations: { readOnlyHint: true },
          run: screenshot,
        },
      ]
    : []),
  {
    name: 'fail',
    description: 'Always answers with an error result.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
    run: () => ({ content: [{ type: 'text', text: 'this tool always fails' }], isError: true }),
  },
];

function makeServer() {
  const server = new Server({ name: 'durable-agent-test', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map(({ name, description, inputSchema, annotations }) => ({ name, description, inputSchema, ...(annotations ? { annotations } : {}) })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = TOOLS.find((t) => t.name === request.params.name);
    if (!tool) return { content: [{ type: 'text', text: `no tool ${request.params.name}` }], isError: true };
    const input = request.params.arguments ?? {};
    const key = request.params._meta?.idempotencyKey ?? null;
    if (input.waitMs) {
      note({ event: 'begin', tool: tool.name, key, input });
      await new Promise((resolve) => setTimeout(resolve, input.waitMs));
    }
    if (tool.run) {
      note({ event: 'read', tool: tool.name, key, input });
      return tool.run(input, key);
    }
    const result = tool.effect(input);
    note({ event: 'effect', tool: tool.name, key, input });
    return result;
  });
  return server;
}

const [mode, portArg] = process.argv.slice(2);
note({ event: 'started', mode });
if (mode === 'http') {
  const httpServer = http.createServer(async (req, res) => {
    const token = process.env.MCP_TEST_TOKEN;
    if (token && req.headers['x-test-token'] !== token) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('wrong or missing x-test-token');
      return;
    }
    // Stateless: a server and a transport per request, so a restarted server serves any client.
    const server = makeServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  httpServer.listen(Number(portArg ?? 0), '127.0.0.1', () => {
    process.stdout.write(`listening http://127.0.0.1:${httpServer.address().port}/mcp\n`);
  });
} else {
  await makeServer().connect(new StdioServerTransport());
}
