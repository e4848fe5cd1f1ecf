/**
 * A ```console block of the docs as a session to run: each `$ ` line a command of the CLI
 * (`[NAME=value …] npx durable-agent ARGS  # exit code N`, or `# código de saída N` on the
 * Portuguese pages), the lines under it what it prints on stdout.
 */

export interface ConsoleStep {
  /** The line as printed, for the test's messages. */
  command: string;
  /** The variables set in front of the command. */
  env: Record<string, string>;
  /** The words after `npx durable-agent`. */
  args: string[];
  exitCode: number;
  stdout: string;
}

const PROMPT = '$ ';
const EXIT_COMMENT = /\s+#\s*(?:exit code|código de saída)\s+(\d+)\s*$/;

export function consoleSteps(block: string): ConsoleStep[] {
  const steps: ConsoleStep[] = [];
  for (const line of block.replace(/\n$/, '').split('\n')) {
    if (line.startsWith(PROMPT)) {
      steps.push(stepOf(line));
      continue;
    }
    const step = steps.at(-1);
    if (!step) throw new Error(`a console block starts with output, not a command: ${JSON.stringify(line)}`);
    step.stdout += `${line}\n`;
  }
  return steps;
}

function stepOf(line: string): ConsoleStep {
  const exit = EXIT_COMMENT.exec(line);
  if (!exit) throw new Error(`${line}: a command of a console block ends with its exit code (# exit code N, # código de saída N)`);
  const text = line.slice(PROMPT.length, exit.index);
  if (/['"\\$`;&|<>]/.test(text)) throw new Error(`${line}: only plain words are run here (no quotes, variables or redirections)`);
  const words = text.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (words.length > 0 && /^[A-Z_]+=/.test(words[0]!)) {
    const [name, ...value] = words.shift()!.split('=');
    env[name!] = value.join('=');
  }
  if (words[0] !== 'npx' || words[1] !== 'durable-agent') throw new Error(`${line}: not a command of durable-agent (npx durable-agent …)`);
  return { command: line, env, args: words.slice(2), exitCode: Number(exit[1]), stdout: '' };
}
