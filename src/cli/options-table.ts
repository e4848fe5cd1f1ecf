/**
 * The README's table of every flag: which commands take it, the API option it sets, its default
 * and its old names, printed from the same declarations as the parser and the help.
 */
import { COMMANDS, type OptionSpec } from './command-table.ts';
import { optionNotes, optionUsage } from './help.ts';
import { flagOf } from './options/option.ts';

export const OPTIONS_TABLE_START = '<!-- options table: printed by `npm run options-table`; a test checks it -->';
export const OPTIONS_TABLE_END = '<!-- end of the options table -->';

export function optionsTable(): string {
  const rows = new Map<string, { option: OptionSpec; commands: string[]; apis: Set<string>; defaults: Map<string, string[]> }>();
  for (const command of COMMANDS) {
    for (const option of command.options) {
      const row = rows.get(flagOf(option)) ?? { option, commands: [], apis: new Set<string>(), defaults: new Map<string, string[]>() };
      row.commands.push(command.name);
      // The parser's own defaults (a number each command sets: its port) are told apart by command.
      if (option.default !== undefined) {
        const given = defaultOf(option);
        row.defaults.set(given, [...(row.defaults.get(given) ?? []), command.name]);
      }
      if (option.api !== undefined) row.apis.add(option.api);
      rows.set(flagOf(option), row);
    }
  }
  const lines = [...rows.values()]
    .sort((a, b) => flagOf(a.option).localeCompare(flagOf(b.option)))
    .map(({ option, commands, apis, defaults }) => {
      const notes = optionNotes(option).filter((note) => !note.startsWith('was '));
      // A flag whose parser's default differs between commands (each its own port) says each one's.
      const shown = defaults.size > 1 ? [...defaults].map(([given, names]) => `${given} (${names.join(', ')})`).join(', ') : defaultOf(option);
      const range = notes.filter((note) => !note.startsWith('default: ')).join('; ');
      const api = [...apis].map((name) => `\`${name}\``).join(', ');
      const old = (option.aliases ?? []).map((alias) => `\`--${alias.flag}\``).join(', ');
      return `| \`${optionUsage(option)}\` | ${commands.join(', ')} | ${api} | ${cell(shown)} | ${cell(range)} | ${old} |`;
    });
  return [OPTIONS_TABLE_START, '| Flag | Commands | API option | Default | Range | Old name |', '|---|---|---|---|---|---|', ...lines, OPTIONS_TABLE_END].join('\n');
}

function defaultOf(option: OptionSpec): string {
  return optionNotes(option).find((note) => note.startsWith('default: '))?.slice('default: '.length) ?? '';
}

function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}
