/**
 * The chat example: one process that serves a chat page and, beside it, the HTTP API of
 * `durable-agent serve` (createServer) over a folder of runs. Run it from a checkout after
 * `npm ci` (which builds the package):
 *
 *   ANTHROPIC_API_KEY=… node examples/chat/server.mjs
 *
 * The page's origin is this server's: its requests to /v1/… are passed to the API, which listens
 * on 127.0.0.1 on a port of its own, so the page needs no CORS and the API is not reachable from
 * elsewhere. The page's script imports `durable-agent/client` as the ES modules the build wrote
 * (dist/src/client/), mapped by an import map: no bundler, no build step of the example's own.
 *
 * Environment: ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL for another endpoint), PORT (8080), HOST
 * (127.0.0.1), CHAT_DIR (examples/chat/runs), CHAT_MODEL, DURABLE_AGENT_API_TOKEN (NAME:SECRET;
 * without it a token is made once and kept in CHAT_DIR/chat-token, so that a restart keeps it).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'durable-agent';
import { notesAgent } from './agent.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PAGE = path.join(HERE, 'page');
// The client as the package's build wrote it: its own modules and the one error class they import.
const CLIENT_DIST = path.dirname(fileURLToPath(import.meta.resolve('durable-agent/client')));
const LIB = path.dirname(CLIENT_DIST);
const LIB_FILES = /^\/lib\/(client\/[a-z-]+\.js|util\/durable-agent-error\.js)$/;
const PAGE_FILES = { '/chat.js': 'text/javascript', '/chat.css': 'text/css' };

const dir = path.resolve(process.env.CHAT_DIR || path.join(HERE, 'runs'));
const port = Number(process.env.PORT || 8080);
const host = process.env.HOST || '127.0.0.1';

if (!process.env.ANTHROPIC_API_KEY) {
  console.error('[chat] ANTHROPIC_API_KEY is not set: the agent talks to Claude. Set it, then start again.');
  process.exit(2);
}
fs.mkdirSync(dir, { recursive: true });
const token = process.env.DURABLE_AGENT_API_TOKEN || sessionToken(dir);

const api = await createServer({
  dir,
  agents: [notesAgent(path.join(dir, 'notes.jsonl'))],
  port: 0,
  env: { ...process.env, DURABLE_AGENT_API_TOKEN: token },
  notice: (line) => console.log(line),
});

const server = http.createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://page');
  if (url.pathname.startsWith('/v1/')) return forward(request, response);
  if (request.method !== 'GET') return answer(response, 405, 'text/plain', 'GET only');
  if (url.pathname === '/') return answer(response, 200, 'text/html; charset=utf-8', pageHtml());
  if (PAGE_FILES[url.pathname]) return answer(response, 200, PAGE_FILES[url.pathname], fs.readFileSync(path.join(PAGE, url.pathname)));
  const lib = LIB_FILES.exec(url.pathname);
  if (lib) return answer(response, 200, 'text/javascript', fs.readFileSync(path.join(LIB, lib[1])));
  answer(response, 404, 'text/plain', 'not found');
});
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(port, host, resolve);
});
console.log(`[chat] http://${host}:${server.address().port} (runs in ${dir})`);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    server.close();
    server.closeAllConnections();
    // The runs driven here stop at their next step, saved: the next start takes them up.
    await api.close();
    process.exit(0);
  });
}

/** The page, with the token it calls the API with. */
function pageHtml() {
  const escaped = token.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
  return fs.readFileSync(path.join(PAGE, 'index.html'), 'utf8').replace('{{TOKEN}}', () => escaped);
}

function answer(response, status, type, body) {
  response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  response.end(body);
}

/** Passes a request to the API as it is and its answer back as it comes (an event stream too). */
function forward(request, response) {
  const upstream = http.request({ host: '127.0.0.1', port: api.port, method: request.method, path: request.url, headers: request.headers }, (reply) => {
    response.writeHead(reply.statusCode ?? 502, reply.headers);
    reply.pipe(response);
  });
  upstream.on('error', () => {
    if (response.headersSent) response.destroy();
    else answer(response, 502, 'application/json', JSON.stringify({ error: { code: 'internal', message: 'The API did not answer.' } }));
  });
  // A page that goes away (a reload) ends its stream here too.
  response.on('close', () => upstream.destroy());
  request.pipe(upstream);
}

/**
 * A token for this folder, made once and kept beside its runs (readable by this user only), so
 * that a restart keeps it and an open page goes on with it. A real app gives each user their own.
 */
function sessionToken(folder) {
  const file = path.join(folder, 'chat-token');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const made = `chat:${randomBytes(24).toString('hex')}`;
  fs.writeFileSync(file, `${made}\n`, { mode: 0o600 });
  return made;
}
