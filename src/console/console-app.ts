/**
 * The console's routes, on Hono: the page and its assets, the read API (the list, a run, the
 * machine's diagram, a run's live records) and the writes (a decision, cancel, pause, unpause).
 * Every request passes the guard first (console-guard.ts), which names its caller; every answer
 * is the caller's: its tenant's runs only (another tenant's run is not found), and its name as
 * who decides. Every body leaves through one function that takes the process's secrets out of
 * it; a GET changes nothing.
 */
import { Hono, type Context } from 'hono';
import { type Caller, maySteer } from '../access/caller.ts';
import { bodyLimit } from 'hono/body-limit';
import { streamSSE } from 'hono/streaming';
import { DurableAgentError } from '../util/durable-agent-error.ts';
import { redactSecrets } from '../util/redact.ts';
import { ConsoleRunNotFoundError } from './console-errors.ts';
import type { ConsoleGuard } from './console-guard.ts';
import { CONSOLE_PAGE, ICON_SVG } from './page-html.ts';
import { type ControlAsked, controlFor, type DecisionAsked, decideFor, forkFor, signalFor } from './run-actions.ts';
import { machineSvg, runDetail } from './run-detail.ts';
import { RecordTail } from './record-tail.ts';
import { type ConsoleRow, type ListCursor, RUN_CATEGORIES, type RunCategory, type RunList, type RunSources } from './run-sources.ts';

export interface ConsoleAppOptions {
  sources: RunSources;
  /** Names each /api request's caller (its name is who the journal records as deciding or asking). */
  guard: ConsoleGuard;
  /** Values that never leave in a body: the API keys of the environment, the token itself. */
  secrets: readonly string[];
  /** The page's script, bundled from page/ (page-assets.ts). */
  script: string;
  /** The page's style: the diagram's, from the visualizer, then the console's own. */
  style: string;
}

/** A live stream says it is still there this often, so a proxy or the page notices a dead one. */
const HEARTBEAT_MS = 15_000;
/** The most rows one answer of the list holds, newest first: `offset` pages on, a search or a filter narrows. */
export const LIST_LIMIT = 1000;
/** The rows an answer holds when the request says no `limit`: the page's first screenful, whatever the store's size. */
export const PAGE_ROWS = 100;
const VERDICTS = new Set(['approved', 'denied', 'answered']);
/**
 * The largest body a request may send. The page's largest is a decision with an edited input or a
 * signal's data, a few kilobytes; a body past this is refused before it is read (by its
 * Content-Length, or as its chunks come), so that a holder of the token cannot make the console
 * hold tens of megabytes.
 */
export const MAX_BODY_BYTES = 1024 * 1024;

/** What a route knows of its request besides the request: who asks (set by the guard on every /api request). */
type ConsoleEnv = { Variables: { caller: Caller } };
type ConsoleContext = Context<ConsoleEnv>;

export function consoleApp(options: ConsoleAppOptions): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const { sources, guard } = options;
  const clean = (text: string) => redactSecrets(text, [...options.secrets]);
  const rowJson = new WeakMap<ConsoleRow, string>();
  // A run the caller may see, or ConsoleRunNotFoundError: another tenant's run is not there for it.
  const runOf = (c: ConsoleContext) => sources.run(c.req.param('key')!, c.get('caller').tenant);
  const json = (c: ConsoleContext, body: unknown, status: 200 | 400 | 403 | 404 | 409 | 413 | 500 = 200) =>
    c.body(clean(JSON.stringify(body)), status, { 'content-type': 'application/json; charset=utf-8' });

  app.use('*', async (c, next) => {
    const verdict = guard.check({
      method: c.req.method,
      path: c.req.path,
      host: c.req.header('host'),
      origin: c.req.header('origin'),
      secFetchSite: c.req.header('sec-fetch-site'),
      authorization: c.req.header('authorization'),
      contentType: c.req.header('content-type'),
    });
    if (!verdict.ok) return json(c, { error: `Refused: ${verdict.why}. Nothing was changed.` }, 403);
    if (verdict.caller) c.set('caller', verdict.caller);
    await next();
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'no-referrer');
    c.header('cache-control', 'no-store');
    c.header('x-frame-options', 'DENY');
  });
  app.use(
    '*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      // The connection is closed with the answer: what is left of the body is not read to keep it open.
      onError: (c) => {
        c.header('connection', 'close');
        return json(c, { error: `Refused: the body is larger than ${MAX_BODY_BYTES / 1024 / 1024} MiB, more than any request of the console sends. Nothing was changed.` }, 413);
      },
    }),
  );

  app.onError((error, c) => {
    if (error instanceof ConsoleRunNotFoundError) return json(c, { error: error.message }, 404);
    if (error instanceof DurableAgentError && error.kind === 'refused') return json(c, { error: error.message, name: error.name }, 409);
    return json(c, { error: `The console could not do it: ${error.message}` }, 500);
  });

  const page = (c: ConsoleContext) =>
    c.html(CONSOLE_PAGE, 200, {
      'content-security-policy':
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    });
  app.get('/', page);
  app.get('/runs/:key', page);
  app.get('/console.js', (c) => c.body(options.script, 200, { 'content-type': 'text/javascript; charset=utf-8' }));
  app.get('/console.css', (c) => c.body(options.style, 200, { 'content-type': 'text/css; charset=utf-8' }));
  app.get('/favicon.ico', (c) => c.body(ICON_SVG, 200, { 'content-type': 'image/svg+xml' }));

  app.get('/api/runs', async (c) => {
    const caller = c.get('caller');
    const limit = Math.min(LIST_LIMIT, Math.max(1, Number.parseInt(c.req.query('limit') ?? '', 10) || PAGE_ROWS));
    const offset = Math.max(0, Number.parseInt(c.req.query('offset') ?? '', 10) || 0);
    const after = cursorOf(c.req.query('after'));
    // ?tenant= narrows the list to one tenant; a caller of one tenant is narrowed to it whatever it asks.
    const asked = c.req.query('tenant') || undefined;
    const tenant = caller.tenant ?? asked;
    const list = asked !== undefined && asked !== tenant ? noRuns() : await sources.list({ category: c.req.query('category'), query: c.req.query('q'), limit, offset, after, tenant });
    const tenants = caller.tenant === null ? await sources.tenants() : [caller.tenant];
    const { rows, more, ...rest } = list;
    // Each row's JSON, secrets out, is made once: a row is a new object whenever its run changed.
    const parts = rows.map((row) => {
      let text = rowJson.get(row);
      if (text === undefined) rowJson.set(row, (text = clean(JSON.stringify(row))));
      return text;
    });
    const last = rows[rows.length - 1];
    // The next page's cursor: the last row's place in the order, as the page passes it back in ?after=.
    const next = more && last ? `${last.updatedAt ?? 0}.${last.key}` : null;
    const body = `{"rows":[${parts.join(',')}],${clean(JSON.stringify({ ...rest, offset, more, next, by: caller.name, role: caller.role, tenant: caller.tenant, tenants })).slice(1)}`;
    return c.body(body, 200, { 'content-type': 'application/json; charset=utf-8' });
  });
  app.get('/api/machine.svg', async (c) => c.body(await machineSvg(), 200, { 'content-type': 'image/svg+xml' }));
  app.get('/api/runs/:key', async (c) => {
    const detail = await runDetail(await runOf(c));
    const caller = c.get('caller');
    // To a token that only reads, every run is read-only: the page offers it no action it would be refused.
    return json(c, maySteer(caller) || detail.readOnly !== null ? detail : { ...detail, readOnly: `the token ${caller.name} only reads` });
  });

  app.get('/api/runs/:key/events', async (c) => {
    const run = await runOf(c);
    const lastSeen = Number.parseInt(c.req.header('last-event-id') ?? c.req.query('after') ?? '-1', 10);
    const tail = new RecordTail(run, Number.isFinite(lastSeen) ? lastSeen : -1);
    return streamSSE(c, async (stream) => {
      let open = true;
      stream.onAbort(() => {
        open = false;
      });
      let quietSince = Date.now();
      while (open) {
        try {
          for (const record of await tail.next()) {
            await stream.writeSSE({ id: String(record.seq), event: 'record', data: clean(JSON.stringify(record)) });
            quietSince = Date.now();
          }
        } catch (error) {
          await stream.writeSSE({ event: 'damage', data: clean(JSON.stringify({ error: (error as Error).message })) });
          return;
        }
        if (Date.now() - quietSince > HEARTBEAT_MS) {
          await stream.write(': still here\n\n');
          quietSince = Date.now();
        }
        await stream.sleep(tail.pollMs);
      }
    });
  });

  app.post('/api/runs/:key/decisions', async (c) => {
    const run = await runOf(c);
    const asked = decisionOf(await bodyOf(c));
    if (typeof asked === 'string') return json(c, { error: asked }, 400);
    const decision = await decideFor(run, asked, c.get('caller').name);
    return json(c, { decision });
  });
  app.post('/api/runs/:key/signals', async (c) => {
    const run = await runOf(c);
    const { name, data, toolUseId } = await bodyOf(c);
    if (typeof name !== 'string') return json(c, { error: 'Say which event: name, the event a wait call waits for. Nothing was sent.' }, 400);
    if (toolUseId !== undefined && typeof toolUseId !== 'string') return json(c, { error: 'toolUseId is the id of the wait call, as text. Nothing was sent.' }, 400);
    return json(c, await signalFor(run, { name, data, toolUseId }, c.get('caller').name));
  });
  for (const kind of ['cancel', 'pause', 'unpause'] as const) {
    app.post(`/api/runs/:key/${kind}`, async (c) => {
      const run = await runOf(c);
      const body = await bodyOf(c);
      const reason = typeof body.reason === 'string' && body.reason.trim() !== '' ? body.reason : null;
      const asked: ControlAsked = kind === 'cancel' ? { kind, reason } : { kind };
      return json(c, await controlFor(run, asked, c.get('caller').name));
    });
  }
  app.post('/api/runs/:key/fork', async (c) => {
    const run = await runOf(c);
    const { at } = await bodyOf(c);
    if (typeof at !== 'number' || !Number.isInteger(at) || at < 0) return json(c, { error: 'Say the record to fork at: at, a record number of the timeline. Nothing was written.' }, 400);
    return json(c, await forkFor(run, at));
  });
  return app;
}

async function bodyOf(c: ConsoleContext): Promise<Record<string, unknown>> {
  try {
    const body = (await c.req.json()) as unknown;
    return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The decision a request asks for, or what is wrong with it. */
function decisionOf(body: Record<string, unknown>): DecisionAsked | string {
  const { toolUseId, verdict } = body;
  if (typeof toolUseId !== 'string') return 'Say which call: toolUseId, the tool_use_id of a call that waits. Nothing was written.';
  if (typeof verdict !== 'string' || !VERDICTS.has(verdict)) return 'Say the verdict: approved, denied or answered. Nothing was written.';
  const asked: DecisionAsked = { toolUseId, verdict: verdict as DecisionAsked['verdict'] };
  for (const key of ['reason', 'note', 'text'] as const) {
    const value = body[key];
    if (value !== undefined && typeof value !== 'string') return `${key} is text. Nothing was written.`;
    if (typeof value === 'string') asked[key] = value;
  }
  if ('input' in body) asked.input = body.input;
  return asked;
}

/** The answer to a caller of one tenant that asks for another's runs: none. */
function noRuns(): RunList {
  return { rows: [], matching: 0, counts: Object.fromEntries(RUN_CATEGORIES.map((name) => [name, 0])) as Record<RunCategory, number>, total: 0, more: false };
}

/** ?after=: a page's next cursor as the list gave it (`<save time in ms>.<key>`); anything else starts from the top. */
function cursorOf(text: string | undefined): ListCursor | undefined {
  const dot = text?.indexOf('.') ?? -1;
  if (text === undefined || dot < 1) return undefined;
  const updatedAt = Number(text.slice(0, dot));
  return Number.isFinite(updatedAt) ? { updatedAt, key: text.slice(dot + 1) } : undefined;
}
