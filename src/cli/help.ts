/** The help text, printed from the command table: every option the parser accepts, and only those. */
import { type AnyCommandSpec, COMMANDS, type OptionSpec } from './command-table.ts';
import { flagOf } from './options/option.ts';
import { formatDuration } from './duration.ts';

/** Lines are wrapped to fit a usual terminal. */
const WIDTH = 100;

/** `durable-agent --help`: the commands, one line each. */
export function mainHelp(version: string): string {
  const commands = COMMANDS.map((command): [string, string] => [usageName(command), command.summary]);
  return [
    `durable-agent ${version}: a durable agent loop. Kill it anywhere, resume, nothing lost, nothing done twice.`,
    '',
    'Usage: durable-agent <command> [options]',
    '       durable-agent <command> --help    a command\'s options, with an example',
    '',
    'Commands:',
    ...twoColumns(commands),
    '',
    'Options:',
    ...twoColumns([
      ['-h, --help', 'this help'],
      ['-v, --version', 'print the version'],
    ]),
    '',
    ...wrap(
      'The fleet commands (db, submit, worker, result, and status, list and the others given --run ID) take the database from --database-url or ' +
        'DURABLE_AGENT_DATABASE_URL. Crash drills: CRASH_AFTER=after-<point>:<n> stops the process right after the ' +
        'n-th pass of a point (demo --list-crash-points lists them), CRASH_MODE=sigkill makes that a real SIGKILL, and ' +
        'DURABLE_AGENT_FAIL_WRITE=<point>:<n> makes the n-th write of a point fail as if the disk were full.',
      WIDTH,
    ),
  ].join('\n');
}

/** `durable-agent <command> --help`: usage, description, every option, examples. */
export function commandHelp(command: AnyCommandSpec): string {
  return [
    `Usage: durable-agent ${command.synopsis ?? `${usageName(command)} [options]`}`,
    '',
    ...wrap(command.description.replaceAll('\n', ' '), WIDTH),
    ...(command.aliases?.length ? ['', `Its old name, still accepted: ${command.aliases.join(', ')}.`] : []),
    '',
    ...(command.arguments?.length ? ['Arguments:', ...twoColumns(command.arguments.map((arg) => [arg.name, arg.help])), ''] : []),
    'Options:',
    ...twoColumns([...command.options.map(optionRow), ['-h, --help', 'this help']]),
    '',
    command.examples.length === 1 ? 'Example:' : 'Examples:',
    ...command.examples.map((example) => `  ${example}`),
  ].join('\n');
}

function usageName(command: AnyCommandSpec): string {
  return [command.name, ...command.words].join(' ');
}

/** The left column of an option's row: its flag, and its value's name. */
export function optionUsage(option: OptionSpec): string {
  return option.type === 'boolean' ? `--${flagOf(option)}` : `--${flagOf(option)} ${option.value ?? 'VALUE'}`;
}

/** What an option's help says after its text: the range, the default, the old names. */
export function optionNotes(option: OptionSpec): string[] {
  const notes: string[] = [];
  if (option.type === 'integer' || option.type === 'decimal' || option.type === 'ratio') notes.push(`${option.min} to ${option.max}`);
  if (option.type === 'duration') notes.push(`${formatDuration(option.min!)} to ${formatDuration(option.max!)}`);
  const shown = option.default === undefined ? option.defaultText : option.type === 'duration' ? formatDuration(option.default) : String(option.default);
  if (shown !== undefined) notes.push(`default: ${shown}`);
  if (option.aliases?.length) notes.push(`was ${option.aliases.map((alias) => `--${alias.flag}`).join(', ')}`);
  return notes;
}

function optionRow(option: OptionSpec): [string, string] {
  const left = optionUsage(option);
  const notes = optionNotes(option);
  return [left, notes.length > 0 ? `${option.help} (${notes.join('; ')})` : option.help];
}

/** Indented rows, the right column wrapped under itself. */
function twoColumns(rows: ReadonlyArray<readonly [string, string]>): string[] {
  const left = Math.max(...rows.map(([name]) => name.length));
  const indent = ' '.repeat(left + 4);
  return rows.flatMap(([name, text]) => {
    const [first = '', ...rest] = wrap(text, WIDTH - indent.length);
    return [`  ${name.padEnd(left)}  ${first}`, ...rest.map((line) => indent + line)];
  });
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ').filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}
