/**
 * The model's text as it streams, from the worker that drives a run to whoever follows it (the
 * HTTP API's event stream): a NOTIFY on one channel, the run's id and a piece of text as JSON.
 * Nothing is stored: a piece nobody listened for is gone, and the recorded reply supersedes them
 * all. A payload stays far below PostgreSQL's limit (8000 bytes).
 */
import type { Database } from './pool.ts';

export const TEXT_CHANNEL = 'da_text';

/** Characters of text in one notification: at most 3 bytes each in UTF-8, with room for the run id. */
const PIECE = 2000;

export interface TextPiece {
  runId: string;
  text: string;
}

export async function publishText(db: Pick<Database, 'query'>, runId: string, text: string): Promise<void> {
  for (let at = 0; at < text.length; at += PIECE) {
    await db.query('SELECT pg_notify($1, $2)', [TEXT_CHANNEL, JSON.stringify({ runId, text: text.slice(at, at + PIECE) })]);
  }
}

/** A notification's piece, or null for a payload that is not one. */
export function textPieceOf(payload: string | undefined): TextPiece | null {
  if (payload === undefined) return null;
  try {
    const piece = JSON.parse(payload) as Partial<TextPiece>;
    return typeof piece.runId === 'string' && typeof piece.text === 'string' ? { runId: piece.runId, text: piece.text } : null;
  } catch {
    return null;
  }
}
