/** `durable-agent console`: its options and their parse. */
import path from 'node:path';
import { UsageError } from '../usage-error.ts';
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { databaseUrl } from '../options/target.ts';

export interface ConsoleArgs {
  command: 'console';
  /** The directories whose runs are shown (the ones given to demo or run). */
  dirs: string[];
  /** The fleet's database too (else DURABLE_AGENT_DATABASE_URL's, when it is set). */
  databaseUrl: string | null;
  host: string | null;
  port: number;
  /** The file the token is read from (else DURABLE_AGENT_CONSOLE_TOKEN's; never a word of the command line). */
  tokenFile: string | null;
  /** A tokens file (durable-agent token add): its tokens are taken beside the console's own, each scoped to its role and tenant. */
  tokensFile: string | null;
  by: string | null;
}

export const DEFAULT_CONSOLE_PORT = 7420;

export const consoleSpec = command({
  name: 'console',
  words: [],
  summary: 'a web page of every run: the list by state, one run live, approve, deny, cancel, pause',
  description:
    'Serves a page on this machine (127.0.0.1) that lists the runs of DIR (and of more directories, separated by\n' +
    `"${path.delimiter}") and, with --database-url, of the fleet; filters them by state and opens one: its conversation,\n` +
    'the machine diagram, its timeline, live as records are written; and approves, denies, answers, sends a\n' +
    "wait's event, cancels, pauses and forks through the same inboxes as the command line. It prints its\n" +
    'address with a token made for this start;\n' +
    'with --host other than loopback it needs a token of your choosing: DURABLE_AGENT_CONSOLE_TOKEN=NAME:SECRET in\n' +
    'the environment, or --token-file FILE, a file only you can read (chmod 600). Never on the command line,\n' +
    'where every user of the machine can read it (ps): --token NAME:SECRET is refused. --tokens-file FILE takes the\n' +
    "tokens of durable-agent token add beside it: a read token only sees runs, a token of one tenant sees that tenant's\n" +
    'runs only.',
  options: [
    option({ key: 'dir', type: 'string', value: 'DIR', help: `the directories whose runs are shown, separated by "${path.delimiter}"`, defaultText: 'the current directory' }),
    databaseUrl,
    option({ key: 'port', type: 'integer', value: 'N', help: 'the port to listen on (0: any free port)', min: 0, max: 65535, default: DEFAULT_CONSOLE_PORT }),
    option({ key: 'host', type: 'string', value: 'HOST', help: 'the address to listen on; other than loopback it needs a token of your choosing', defaultText: '127.0.0.1' }),
    option({
      key: 'tokenFile',
      type: 'string',
      value: 'FILE',
      help: 'a file only you can read (chmod 600) holding the token the page must send (NAME:SECRET names who uses it)',
      readsFile: true,
      defaultText: '$DURABLE_AGENT_CONSOLE_TOKEN, else one made for this start',
    }),
    option({ key: 'tokensFile', type: 'string', value: 'FILE', help: "the tokens of durable-agent token add, each with its role and tenant, beside the console's own" }),
    option({ key: 'by', type: 'string', value: 'NAME', help: "who decides and controls with the console's own token, as the journal records it", defaultText: "the token's name, else your user name" }),
  ],
  secretFlags: { token: 'give the token in the environment (DURABLE_AGENT_CONSOLE_TOKEN=NAME:SECRET) or in a file only you can read (--token-file FILE, chmod 600 FILE).' },
  examples: [
    'durable-agent console --dir my-project',
    'durable-agent console --tokens-file ~/.config/durable-agent/tokens',
    'durable-agent console --host 0.0.0.0 --token-file ~/.config/durable-agent/console-token',
    `durable-agent console --dir app-a${path.delimiter}app-b --database-url postgresql://user@db-host:5432/agents`,
  ],
  parse: (values, { cwd }): ConsoleArgs => {
    const dirs = (values.dir ?? cwd).split(path.delimiter).filter((dir) => dir !== '');
    if (dirs.length === 0) throw new UsageError(`--dir needs at least one directory (several are separated by "${path.delimiter}").`);
    return {
      command: 'console',
      dirs,
      databaseUrl: values.databaseUrl ?? null,
      host: values.host ?? null,
      port: values.port,
      tokenFile: values.tokenFile ?? null,
      tokensFile: values.tokensFile ?? null,
      by: values.by ?? null,
    };
  },
});
