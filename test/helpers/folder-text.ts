/**
 * Everything a folder holds as text, for "grep finds none of it" checks: every file's name
 * (a blob's name must give nothing away either) and its bytes, read as latin1 so that no byte
 * sequence is dropped, under every folder below it.
 */
import fs from 'node:fs';
import path from 'node:path';

export function folderText(dir: string): string {
  const texts: string[] = [];
  const walk = (at: string) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const file = path.join(at, entry.name);
      if (entry.isDirectory()) walk(file);
      else texts.push(entry.name, fs.readFileSync(file, 'latin1'));
    }
  };
  walk(dir);
  return texts.join('\n');
}
