/**
 * Content blocks that carry a payload: an image or a document (a PDF, a text file), inside a
 * tool_result or a message. They are told apart here once, for everything that must treat them
 * differently from text: the journal (which keeps a large payload once, in a blob), the token
 * estimate, the API's limits, and the readers that show a run (never its base64).
 */

export type PayloadKind = 'image' | 'document';

/** What a payload is, without its bytes. */
export interface Payload {
  kind: PayloadKind;
  /** `base64` and `text` carry the bytes; `url`, `file` (a Files API id) and `content` point at or hold other blocks. */
  source: string;
  /** The media type given (absent for a url or file source). */
  mediaType: string | null;
  /** The payload's size in bytes (decoded), when the block carries it; null for a url or file source. */
  bytes: number | null;
}

/** A block's source as stored in the journal in place of its bytes (see src/store/blobs.ts). */
export interface BlobSource {
  type: 'base64' | 'text';
  media_type: string;
  /**
   * The blob's file name: `sha256-` and the SHA-256 of the bytes in lowercase hex; in a sealed run,
   * `hmac-` and a hash keyed by the run key (src/seal/blob-seal.ts), which says nothing without it.
   */
  $blob: string;
  /** The bytes' length (decoded). */
  bytes: number;
}

export function isBlobSource(source: unknown): source is BlobSource {
  return source !== null && typeof source === 'object' && typeof (source as BlobSource).$blob === 'string';
}

/** The payload of an image or document block, or null for any other block. */
export function payloadOf(block: unknown): Payload | null {
  if (block === null || typeof block !== 'object') return null;
  const { type, source } = block as { type?: unknown; source?: unknown };
  if (type !== 'image' && type !== 'document') return null;
  if (source === null || typeof source !== 'object') return { kind: type, source: 'none', mediaType: null, bytes: null };
  const { type: sourceType, media_type: mediaType, data } = source as { type?: unknown; media_type?: unknown; data?: unknown };
  const media = typeof mediaType === 'string' ? mediaType : null;
  if (isBlobSource(source)) return { kind: type, source: String(sourceType), mediaType: media, bytes: typeof source.bytes === 'number' ? source.bytes : null };
  if (sourceType === 'base64' && typeof data === 'string') return { kind: type, source: 'base64', mediaType: media, bytes: base64Bytes(data) };
  if (sourceType === 'text' && typeof data === 'string') return { kind: type, source: 'text', mediaType: media, bytes: Buffer.byteLength(data, 'utf8') };
  return { kind: type, source: typeof sourceType === 'string' ? sourceType : 'none', mediaType: media, bytes: null };
}

/**
 * Every payload in a tool_result's content (or a message's blocks), in order: the blocks
 * themselves, and the images a document of `content` source holds.
 */
export function payloadsIn(content: unknown): Payload[] {
  const found: Payload[] = [];
  visitPayloadBlocks(content, (block) => {
    const payload = payloadOf(block);
    if (payload) found.push(payload);
  });
  return found;
}

/**
 * Calls `visit` with every image and document block of a content list: at its top, inside a
 * tool_result block's content, and inside a document whose source is a list of blocks.
 */
export function visitPayloadBlocks(content: unknown, visit: (block: Record<string, unknown>) => void): void {
  if (!Array.isArray(content)) return;
  for (const block of content) {
    if (block === null || typeof block !== 'object') continue;
    const { type } = block as { type?: unknown };
    if (type === 'tool_result') visitPayloadBlocks((block as { content?: unknown }).content, visit);
    else if (type === 'image' || type === 'document') {
      visit(block as Record<string, unknown>);
      const source = (block as { source?: { type?: unknown; content?: unknown } }).source;
      if (source && typeof source === 'object' && source.type === 'content') visitPayloadBlocks(source.content, visit);
    }
  }
}

/** The bytes a base64 text decodes to, from its length (padding and white space not counted). */
export function base64Bytes(data: string): number {
  let length = data.length;
  while (length > 0 && data.charCodeAt(length - 1) === 61 /* = */) length--;
  // MIME base64 breaks its lines; the base64 a block must carry has no white space, so this rarely copies.
  if (/\s/.test(data)) length = data.slice(0, length).replace(/\s+/g, '').length;
  return Math.floor((length * 3) / 4);
}

type Block = Record<string, unknown>;

/**
 * The content list with each image and document block (wherever visitPayloadBlocks finds one)
 * replaced by what `map` makes of it; the same list, untouched, when `map` changes nothing, and
 * copies only along the way to a changed block otherwise.
 */
export function mapPayloadBlocks<T>(content: readonly T[], map: (block: Block) => Block): readonly T[] {
  let out: T[] | null = null;
  for (let i = 0; i < content.length; i++) {
    const block = content[i];
    const next = mapBlock(block, map) as T;
    if (next !== block) {
      out ??= content.slice();
      out[i] = next;
    }
  }
  return out ?? content;
}

function mapBlock(block: unknown, map: (block: Block) => Block): unknown {
  if (block === null || typeof block !== 'object') return block;
  const { type, content } = block as { type?: unknown; content?: unknown };
  if (type === 'tool_result' && Array.isArray(content)) {
    const mapped = mapPayloadBlocks(content, map);
    return mapped === content ? block : { ...block, content: mapped };
  }
  if (type !== 'image' && type !== 'document') return block;
  let next = map(block as Block);
  const source = next.source as { type?: unknown; content?: unknown } | undefined;
  if (source && typeof source === 'object' && source.type === 'content' && Array.isArray(source.content)) {
    const mapped = mapPayloadBlocks(source.content, map);
    if (mapped !== source.content) next = { ...next, source: { ...source, content: mapped } };
  }
  return next;
}

/** An image or document block with its bytes left out (their length said instead): for a trace or a log. */
export function withoutPayloadBytes(block: Block): Block {
  const source = block.source as { data?: unknown } | undefined;
  if (!source || typeof source !== 'object' || typeof source.data !== 'string') return block;
  const { data: _data, ...rest } = source;
  return { ...block, source: { ...rest, bytes: payloadOf(block)?.bytes ?? null } };
}
