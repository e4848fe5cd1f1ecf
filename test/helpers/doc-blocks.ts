/** The fenced code blocks of the README and the guide (docs/), each with where it stands. */
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from './cli.ts';

export interface DocBlock {
  /** The file, relative to the repository. */
  file: string;
  /** The line of the opening fence. */
  line: number;
  /** The word after the fence ('' when none). */
  lang: string;
  code: string;
}

/** README.md and every page under docs/ but the API pages TypeDoc writes. */
export function docFiles(): string[] {
  const pages: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(REPO, dir), { withFileTypes: true })) {
      const relative = path.posix.join(dir, entry.name);
      if (entry.isDirectory() && !entry.name.startsWith('.') && relative !== 'docs/api') walk(relative);
      else if (entry.isFile() && entry.name.endsWith('.md')) pages.push(relative);
    }
  };
  walk('docs');
  return ['README.md', ...pages.sort()];
}

export function docBlocks(file: string): DocBlock[] {
  const lines = fs.readFileSync(path.join(REPO, file), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  let open: { line: number; lang: string; code: string[] } | null = null;
  lines.forEach((text, index) => {
    const fence = /^```(\S*)\s*$/.exec(text);
    if (!open && fence) open = { line: index + 1, lang: fence[1]!, code: [] };
    else if (open && text === '```') {
      blocks.push({ file, line: open.line, lang: open.lang, code: open.code.join('\n') });
      open = null;
    } else open?.code.push(text);
  });
  if (open) throw new Error(`${file}:${(open as { line: number }).line}: a code block is never closed`);
  return blocks;
}

/**
 * The command lines of a shell block: every line of `sh`, the `$ ` lines of `console` (the rest is
 * what the command printed), joined where a line ends in a backslash, without comments.
 */
export function commandLines(block: DocBlock): string[] {
  const lines = block.lang === 'console' ? block.code.split('\n').filter((line) => line.startsWith('$ ')).map((line) => line.slice(2)) : block.code.split('\n');
  const joined: string[] = [];
  let carry = '';
  for (const line of lines) {
    const text = carry + line;
    if (text.endsWith('\\')) carry = `${text.slice(0, -1)} `;
    else {
      carry = '';
      if (text.trim() && !text.trim().startsWith('#')) joined.push(text);
    }
  }
  return joined;
}

/** The words of a command line as a POSIX shell splits them: quotes kept together, a comment dropped. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quote: '"' | "'" | null = null;
  for (const char of line) {
    if (quote) {
      if (char === quote) quote = null;
      else word += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      word ??= '';
    } else if (/\s/.test(char)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (char === '#' && word === null) break;
    else word = (word ?? '') + char;
  }
  if (quote) throw new Error(`an unclosed ${quote} in: ${line}`);
  if (word !== null) words.push(word);
  return words;
}
