/** Prints the options table of docs/command-line.md from the command declarations; with --write, puts it there. */
import fs from 'node:fs';
import path from 'node:path';
import { OPTIONS_TABLE_END, OPTIONS_TABLE_START, optionsTable } from '../src/cli/options-table.ts';

const table = optionsTable();
if (process.argv.includes('--write')) {
  const file = path.join(import.meta.dirname, '..', 'docs', 'command-line.md');
  const readme = fs.readFileSync(file, 'utf8');
  const start = readme.indexOf(OPTIONS_TABLE_START);
  const end = readme.indexOf(OPTIONS_TABLE_END);
  if (start === -1 || end === -1) throw new Error(`docs/command-line.md has no options table to replace: put ${OPTIONS_TABLE_START} and ${OPTIONS_TABLE_END} where it goes.`);
  fs.writeFileSync(file, readme.slice(0, start) + table + readme.slice(end + OPTIONS_TABLE_END.length));
  console.error('docs/command-line.md: options table written.');
} else {
  console.log(table);
}
