/**
 * The chat example's agent: it keeps notes in one file. `read_notes` only reads (it runs at once);
 * `save_note` changes something, so it waits for a person's approval first, and it is written to
 * run once even if the process dies around it: it records its idempotency key with the note, and
 * `verify` looks for that key, so a run taken up after a crash sees the note saved and does not
 * save it again.
 */
import fs from 'node:fs';
import { defineAgent, defineTool } from 'durable-agent';

/** A current Claude model; CHAT_MODEL names another. */
export const CHAT_MODEL = process.env.CHAT_MODEL || 'claude-sonnet-5-5';

/** One note a line, as JSON: its text and the idempotency key of the call that saved it. */
function savedNotes(notesFile) {
  if (!fs.existsSync(notesFile)) return [];
  return fs
    .readFileSync(notesFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

export function notesAgent(notesFile) {
  const readNotes = defineTool({
    name: 'read_notes',
    description: 'Read the notes saved so far, one a line.',
    inputSchema: { type: 'object', properties: {} },
    readOnly: true,
    run: () => savedNotes(notesFile).map((note) => `- ${note.text}`).join('\n') || '(no notes yet)',
  });
  const saveNote = defineTool({
    name: 'save_note',
    description: 'Save a note for later. A person approves each note before it is saved.',
    inputSchema: { type: 'object', properties: { text: { type: 'string', description: 'The note, one line.' } }, required: ['text'] },
    readOnly: false,
    run: ({ text }, ctx) => {
      fs.appendFileSync(notesFile, `${JSON.stringify({ text, key: ctx.idempotencyKey })}\n`);
      return `Saved: ${text}`;
    },
    verify: (_input, ctx) => ({ happened: savedNotes(notesFile).some((note) => note.key === ctx.idempotencyKey) }),
  });
  return defineAgent({
    name: 'notes',
    model: CHAT_MODEL,
    system: 'You keep notes for the user. Read the notes before you answer about them. Save a note only when asked to, one call per note. Answer briefly.',
    tools: [readNotes, saveNote],
    requireApproval: ['save_note'],
    maxTurns: 10,
  });
}
