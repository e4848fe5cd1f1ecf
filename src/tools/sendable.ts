/**
 * The images and documents of a tool result, checked against what the Messages API takes. A
 * result it refuses (an image over 5 MB, a media type it does not read, bytes that are not what
 * their media type says) would be refused again with every later request of the run, since each
 * request sends the whole conversation: such a result is refused here instead, once, and the
 * model gets an is_error result that says why. Base64 is put in its standard form (no line
 * breaks, padded), so what is stored and what is sent are the same text.
 *
 * Not checked: an image's pixel size (8000 px a side; 2000 px when a request holds more than 20
 * images) and a PDF's page count, which need the file decoded; the API's own error says so.
 */
import type { ContentBlock } from '../../machines/agent-loop.types.ts';
import { mapPayloadBlocks } from '../util/rich-blocks.ts';

/** How every refusal here begins (recordable.ts gives such a result its own advice). */
export const API_LIMIT = 'the Messages API';

export const RESULT_LIMITS = {
  /** One image's base64, in characters (the API's 5 MB). */
  imageBase64Chars: 5 * 1024 * 1024,
  /** Images in one request, and so in one result (the API's 100, for models with a 200k-token window). */
  images: 100,
  /** The base64 and text of a result's images and documents together (a request is at most 32 MB). */
  payloadChars: 32 * 1000 * 1000,
} as const;

export const IMAGE_MEDIA_TYPES: readonly string[] = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

type Block = Record<string, unknown>;
type Source = { type?: unknown; media_type?: unknown; data?: unknown; url?: unknown; file_id?: unknown; content?: unknown };

class Refusal {
  constructor(readonly why: string) {}
}

/** The blocks as they are sent and stored (base64 in standard form), or why the API would refuse them. */
export function sendableContent(blocks: ContentBlock[]): { content: ContentBlock[] } | { refused: string } {
  const count = { image: 0, document: 0, chars: 0 };
  let content: ContentBlock[];
  try {
    content = mapPayloadBlocks(blocks, (block) => checked(block, count)) as ContentBlock[];
  } catch (error) {
    if (error instanceof Refusal) return { refused: error.why };
    throw error;
  }
  if (count.image > RESULT_LIMITS.images) return { refused: `${API_LIMIT} takes at most ${RESULT_LIMITS.images} images in one request, and the result holds ${count.image}` };
  if (count.chars > RESULT_LIMITS.payloadChars) {
    return { refused: `${API_LIMIT} takes requests of at most ${megabytes(RESULT_LIMITS.payloadChars)}, and the result's images and documents alone come to ${megabytes(count.chars)}` };
  }
  return { content };
}

function checked(block: Block, count: { image: number; document: number; chars: number }): Block {
  const kind = block.type === 'image' ? 'image' : 'document';
  const label = `${kind} ${(count[kind] += 1)}`;
  const source = block.source as Source | undefined;
  if (!source || typeof source !== 'object') throw new Refusal(`${API_LIMIT} takes an ${kind} only with a source, and ${label} has none`);
  switch (source.type) {
    case 'url':
      if (typeof source.url === 'string') return block;
      break;
    case 'file':
      if (typeof source.file_id === 'string') return block;
      break;
    case 'base64': {
      const types = kind === 'image' ? IMAGE_MEDIA_TYPES : ['application/pdf'];
      if (typeof source.media_type !== 'string' || !types.includes(source.media_type)) {
        throw new Refusal(`${API_LIMIT} takes ${kind === 'image' ? 'images' : 'base64 documents'} of ${types.join(', ')} only, and ${label} is ${JSON.stringify(source.media_type) ?? 'of no media type'}`);
      }
      const data = typeof source.data === 'string' ? standardBase64(source.data) : null;
      if (!data) throw new Refusal(`${API_LIMIT} takes an ${kind}'s data as base64, and the data of ${label} is not base64`);
      if (kind === 'image' && data.text.length > RESULT_LIMITS.imageBase64Chars) {
        throw new Refusal(`${API_LIMIT} takes at most ${megabytes(RESULT_LIMITS.imageBase64Chars)} of base64 in one image, and ${label} has ${megabytes(data.text.length)}`);
      }
      const found = mediaTypeOf(data.head);
      if (found !== source.media_type) {
        throw new Refusal(`${API_LIMIT} refuses an ${kind} whose bytes are not of its media type, and ${label} says ${source.media_type} but its bytes are ${found ?? 'of no type it reads'}`);
      }
      count.chars += data.text.length;
      const standard = { type: 'base64', media_type: source.media_type, data: data.text };
      return data.text === source.data && sameKeys(source, standard) ? block : { ...block, source: standard };
    }
    case 'text':
      if (kind === 'document' && source.media_type === 'text/plain' && typeof source.data === 'string') {
        count.chars += source.data.length;
        return block;
      }
      break;
    case 'content':
      if (kind === 'document' && (typeof source.content === 'string' || Array.isArray(source.content))) return block;
      break;
  }
  throw new Refusal(`${API_LIMIT} does not take the source of ${label} (${JSON.stringify(source.type) ?? 'no type'}${kind === 'document' ? ', or not with that media type' : ''})`);
}

/** Base64 in its standard form (white space left out, padded), and its first decoded bytes; null if it is not base64. */
function standardBase64(data: string): { text: string; head: Buffer } | null {
  const clean = /\s/.test(data) ? data.replace(/\s+/g, '') : data;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) return null;
  const text = Buffer.from(clean, 'base64').toString('base64');
  // Buffer.from drops a last character that makes no byte (a length of 4n+1): not base64 then.
  if (text.replace(/=+$/, '') !== clean.replace(/=+$/, '')) return null;
  return { text, head: Buffer.from(text.slice(0, 16), 'base64') };
}

/** The media type the first bytes say, among those the API reads. */
function mediaTypeOf(head: Buffer): string | null {
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.toString('latin1', 0, 4) === 'GIF8') return 'image/gif';
  if (head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  if (head.toString('latin1', 0, 5) === '%PDF-') return 'application/pdf';
  return null;
}

function sameKeys(a: object, b: object): boolean {
  return Object.keys(a).join() === Object.keys(b).join();
}

function megabytes(chars: number): string {
  return `${(chars / 1024 / 1024).toFixed(1)} MB`;
}
