/**
 * The fake Messages API's server tools (web search, web fetch, code execution): what the API
 * does with them and what it refuses, for fake-anthropic.ts to call.
 *
 * A script names a server tool call with serverToolUse(name, input): the fake gives it an id and
 * puts its result right after it (a web_search_tool_result with encrypted content, a
 * web_fetch_tool_result, a code execution result with its encrypted stdout…), as the API does
 * within one reply, and counts it in the reply's usage.server_tool_use. A call marked `paused`
 * ends a pause_turn reply without its result: the request that continues the turn gets the result
 * first in its reply. Code execution runs in a container the fake creates and names in the reply
 * (`container`: id and expiry); a request may name it again to reuse it.
 *
 * Refused as the API refuses it (400, nothing answered): a server tool block sent back that is not
 * one the fake issued, byte for byte (an altered encrypted_content, say); a call sent back without
 * its result or a result without its call; a server tool type the API does not have; a container
 * that does not exist or has expired; a paused code execution continued without its container.
 */
import type { ContentBlock, Message, ModelReply } from '../../machines/agent-loop.types.ts';

/** The server tool versions of the bundled SDK (1.14). */
export const KNOWN_SERVER_TOOL_TYPES: readonly string[] = [
  'web_search_20260318',
  'web_search_20260209',
  'web_search_20250305',
  'web_fetch_20260318',
  'web_fetch_20260309',
  'web_fetch_20260209',
  'web_fetch_20250910',
  'code_execution_20260521',
  'code_execution_20260120',
  'code_execution_20250825',
  'code_execution_20250522',
];

/** How a server tool's call and result are named, and which tool of the request offers it. */
const TOOLS: Readonly<Record<string, { result: string; offeredBy: string }>> = {
  web_search: { result: 'web_search_tool_result', offeredBy: 'web_search' },
  web_fetch: { result: 'web_fetch_tool_result', offeredBy: 'web_fetch' },
  code_execution: { result: 'code_execution_tool_result', offeredBy: 'code_execution' },
  bash_code_execution: { result: 'bash_code_execution_tool_result', offeredBy: 'code_execution' },
  text_editor_code_execution: { result: 'text_editor_code_execution_tool_result', offeredBy: 'code_execution' },
};
const RESULT_TYPES = new Set(Object.values(TOOLS).map((tool) => tool.result));
const CODE_TOOLS = new Set(['code_execution', 'bash_code_execution', 'text_editor_code_execution']);

/** A server tool call in a script: the fake gives it its id and result. */
export function serverToolUse(name: keyof typeof TOOLS, input: Record<string, unknown>, options: { paused?: boolean } = {}): ContentBlock {
  return { type: 'server_tool_use', name, input, ...(options.paused ? { paused: true } : {}) };
}

export function isServerToolBlock(block: ContentBlock): boolean {
  return block.type === 'server_tool_use' || RESULT_TYPES.has(block.type);
}

export interface ServerToolRequest {
  index: number;
  headers: Record<string, string | string[] | undefined>;
  body: { messages: Message[]; tools?: Array<Record<string, unknown>>; container?: unknown };
}

export interface Refusal {
  status: number;
  errorType: string;
  message: string;
}

/** Days a container lives, as the API's do (30). */
const CONTAINER_LIFE_MS = 30 * 24 * 3_600_000;

export class FakeServerTools {
  /** Blocks issued, by the call's id: the JSON of the call and of its result (null while paused). */
  private readonly issued = new Map<string, { use: string; result: string | null }>();
  /** Containers made, by id: when each expires (epoch milliseconds). */
  readonly containers = new Map<string, number>();
  /** What the replies reported in usage.server_tool_use, summed. */
  webSearchesReported = 0;
  webFetchesReported = 0;
  /** Server tool blocks that came back byte for byte (counted once per request they were in). */
  blocksVerified = 0;
  /** Each request's container as it named it (null: none). */
  readonly containersAsked: Array<string | null> = [];
  private calls = 0;

  /** Expires every container now (a run resumed after its container's 30 days). */
  expireContainers(): void {
    for (const id of this.containers.keys()) this.containers.set(id, Date.now() - 1);
  }

  /** What the API refuses of the request's server tools and blocks, or null. */
  refusal(request: ServerToolRequest): Refusal | null {
    const refuse = (message: string): Refusal => ({ status: 400, errorType: 'invalid_request_error', message });
    const tools = request.body.tools ?? [];
    for (let t = 0; t < tools.length; t++) {
      const type = tools[t]!.type;
      if (typeof type === 'string' && /^(web_search|web_fetch|code_execution)_/.test(type) && !KNOWN_SERVER_TOOL_TYPES.includes(type)) {
        return refuse(`tools.${t}: Input tag '${type}' found using 'type' does not match any of the expected tags`);
      }
      if (type === 'code_execution_20250522' && !String(request.headers['anthropic-beta'] ?? '').split(',').includes('code-execution-2025-05-22')) {
        return refuse(`tools.${t}: code_execution_20250522 needs the beta header code-execution-2025-05-22`);
      }
    }
    const container = containerIdOf(request.body.container);
    this.containersAsked.push(container);
    if (container !== null) {
      const expires = this.containers.get(container);
      if (expires === undefined) return { status: 404, errorType: 'not_found_error', message: `container: ${container} not found` };
      if (expires <= Date.now()) return refuse(`container: ${container} has expired; leave container out for a new one`);
    }
    let verified = 0;
    const messages = request.body.messages;
    // Consecutive assistant messages are one turn to the API (a paused turn goes on in the next): a call and its result may be in two.
    let uses = new Set<string>();
    let results = new Set<string>();
    for (let m = 0; m < messages.length; m++) {
      const content = messages[m]!.content;
      if (typeof content !== 'string') {
        for (let b = 0; b < content.length; b++) {
          const block = content[b]!;
          if (!isServerToolBlock(block)) continue;
          const id = String(block.type === 'server_tool_use' ? block.id : block.tool_use_id);
          const issued = this.issued.get(id);
          const expected = block.type === 'server_tool_use' ? issued?.use : issued?.result;
          // Key order aside (a streamed block is assembled in another order), every field as it was issued.
          if (messages[m]!.role !== 'assistant' || expected === undefined || expected === null || canonical(block) !== canonical(JSON.parse(expected))) {
            return refuse(`messages.${m}.content.${b}: the ${block.type} block was not sent back as it was returned (its encrypted content is checked)`);
          }
          if (block.type !== 'server_tool_use' && !uses.has(id)) return refuse(`messages.${m}.content.${b}: a result for ${id} comes without its server_tool_use`);
          (block.type === 'server_tool_use' ? uses : results).add(id);
          verified += 1;
        }
      }
      if (messages[m + 1]?.role === 'assistant' && messages[m]!.role === 'assistant') continue;
      const paused = m === messages.length - 1 && typeof content !== 'string' ? pausedCall(content) : null;
      for (const id of uses) {
        if (!results.has(id) && id !== paused) return refuse(`messages.${m}: server_tool_use ${id} is not followed by its result (a result block was dropped)`);
      }
      uses = new Set();
      results = new Set();
    }
    const last = messages.at(-1);
    const pausedId = last?.role === 'assistant' && typeof last.content !== 'string' ? pausedCall(last.content) : null;
    if (pausedId !== null) {
      const use = JSON.parse(this.issued.get(pausedId)!.use) as ContentBlock;
      if (CODE_TOOLS.has(String(use.name)) && container === null) return refuse(`container: the paused ${String(use.name)} call runs in a container; name it to continue`);
    }
    this.blocksVerified += verified;
    return null;
  }

  /**
   * The scripted reply with its server tool calls given ids and results (and the result of a call
   * the request continues, first), its usage counting them, and its container when code ran.
   */
  reply(request: ServerToolRequest, reply: ModelReply): ModelReply {
    const offered = new Set((request.body.tools ?? []).map((tool) => (typeof tool.type === 'string' ? String(tool.name) : null)).filter((name) => name !== null));
    const content: ContentBlock[] = [];
    let searches = 0;
    let fetches = 0;
    let ranCode = false;
    const count = (name: string) => {
      if (name === 'web_search') searches += 1;
      else if (name === 'web_fetch') fetches += 1;
      else ranCode = true;
    };
    const last = request.body.messages.at(-1);
    const continued = last?.role === 'assistant' && typeof last.content !== 'string' ? pausedCall(last.content) : null;
    if (continued !== null) {
      const issued = this.issued.get(continued)!;
      const use = JSON.parse(issued.use) as ContentBlock;
      const result = resultOf(use, request.index);
      issued.result = JSON.stringify(result);
      content.push(result);
      count(String(use.name));
    }
    for (const block of reply.content) {
      if (block.type !== 'server_tool_use' || typeof block.id === 'string') {
        content.push(block);
        continue;
      }
      const name = String(block.name);
      const tool = TOOLS[name];
      if (!tool || !offered.has(tool.offeredBy)) throw new Error(`the script calls the server tool ${name}, which request ${request.index} does not offer`);
      this.calls += 1;
      const { paused, ...call } = block;
      const use: ContentBlock = { ...call, id: `srvtoolu_fake_${String(this.calls).padStart(3, '0')}`, caller: { type: 'direct' } };
      const result = paused ? null : resultOf(use, request.index);
      this.issued.set(String(use.id), { use: JSON.stringify(use), result: result ? JSON.stringify(result) : null });
      content.push(use);
      if (result) {
        content.push(result);
        count(name);
      } else if (CODE_TOOLS.has(name)) {
        ranCode = true;
      }
    }
    this.webSearchesReported += searches;
    this.webFetchesReported += fetches;
    const usage = { ...reply.usage, ...(searches ? { webSearchRequests: searches } : {}), ...(fetches ? { webFetchRequests: fetches } : {}) };
    const asked = containerIdOf(request.body.container);
    let container = asked;
    if (container === null && ranCode) {
      container = `container_fake_${String(this.containers.size + 1).padStart(3, '0')}`;
      this.containers.set(container, Date.now() + CONTAINER_LIFE_MS);
    }
    const named = container === null ? {} : { container: { id: container, expires_at: new Date(this.containers.get(container)!).toISOString() } };
    return { ...reply, content, usage, ...named };
  }
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner === null || typeof inner !== 'object' || Array.isArray(inner) ? inner : Object.fromEntries(Object.keys(inner as object).sort().map((key) => [key, (inner as Record<string, unknown>)[key]])),
  );
}

function containerIdOf(given: unknown): string | null {
  if (typeof given === 'string') return given;
  if (given !== null && typeof given === 'object' && typeof (given as { id?: unknown }).id === 'string') return (given as { id: string }).id;
  return null;
}

/** The id of a call that ends the content without its result (a paused turn), or null. */
function pausedCall(content: readonly ContentBlock[]): string | null {
  const last = content.at(-1);
  return last?.type === 'server_tool_use' ? String(last.id) : null;
}

/** A result as the API words it, with the fields a client must send back untouched. */
function resultOf(use: ContentBlock, request: number): ContentBlock {
  const id = String(use.id);
  const input = (use.input ?? {}) as Record<string, unknown>;
  const sealed = (what: string) => Buffer.from(`sealed-${what}-${id}-${request}`).toString('base64');
  switch (use.name) {
    case 'web_search':
      return {
        type: 'web_search_tool_result',
        tool_use_id: id,
        caller: { type: 'direct' },
        content: [1, 2].map((n) => ({ type: 'web_search_result', url: `https://example.com/${n}?q=${encodeURIComponent(String(input.query ?? ''))}`, title: `Result ${n}`, encrypted_content: sealed(`page-${n}`), page_age: n === 1 ? 'April 30, 2026' : null })),
      };
    case 'web_fetch':
      return {
        type: 'web_fetch_tool_result',
        tool_use_id: id,
        caller: { type: 'direct' },
        content: { type: 'web_fetch_result', url: String(input.url ?? 'https://example.com'), retrieved_at: null, content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: `The page at ${String(input.url)}.` }, title: null, citations: null } },
      };
    case 'code_execution':
      return { type: 'code_execution_tool_result', tool_use_id: id, content: { type: 'encrypted_code_execution_result', encrypted_stdout: sealed('stdout'), stderr: '', return_code: 0, content: [] } };
    case 'bash_code_execution':
      return { type: 'bash_code_execution_tool_result', tool_use_id: id, content: { type: 'bash_code_execution_result', stdout: `ran: ${String(input.command ?? '')}\n`, stderr: '', return_code: 0, content: [] } };
    default:
      return { type: 'text_editor_code_execution_tool_result', tool_use_id: id, content: { type: 'text_editor_code_execution_create_result', is_file_update: false } };
  }
}
