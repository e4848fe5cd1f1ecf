/** `durable-agent token add NAME`, `token list`, `token remove NAME`: the tokens file of the console and the HTTP API. */
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { json } from '../options/output.ts';
import { UsageError } from '../usage-error.ts';

export type TokenArgs = TokenAddArgs | TokenListArgs | TokenRemoveArgs;

interface TokenTarget {
  command: 'token';
  /** The tokens file (access/tokens-file.ts). */
  tokensFile: string;
}

export interface TokenAddArgs extends TokenTarget {
  action: 'add';
  name: string;
  role: 'read' | 'steer';
  /** null: every tenant's runs. */
  tenant: string | null;
  json: boolean;
}

export interface TokenListArgs extends TokenTarget {
  action: 'list';
  json: boolean;
}

export interface TokenRemoveArgs extends TokenTarget {
  action: 'remove';
  name: string;
}

const TOKEN_ACTIONS = ['add', 'list', 'remove'] as const;

export const tokenSpec = command({
  name: 'token',
  words: [],
  arguments: [
    { name: 'ACTION', help: `what to do: ${TOKEN_ACTIONS.join(', ')}` },
    { name: 'NAME', help: "the token's name: who the journal records as deciding (add, remove)", optional: true },
  ],
  synopsis: 'token (add NAME --role read|steer [--tenant T] | list | remove NAME) --tokens-file FILE',
  summary: 'make, list and remove the tokens of the console and the HTTP API, each with a role and a tenant',
  description:
    'add NAME: makes a token, NAME:SECRET with 32 random bytes, and prints it once: the file keeps only its SHA-256.\n' +
    'A read token sees runs; a steer token also decides, signals, cancels, pauses and forks. With --tenant it sees\n' +
    "only that tenant's runs (another tenant's run is not found to it); without, every tenant's. The file is made\n" +
    'with mode 0600 and must stay yours alone. list: every token, its role and tenant (never a hash). remove NAME:\n' +
    'the token stops working at its next request, without a restart of the console.',
  options: [
    option({ key: 'tokensFile', type: 'string', value: 'FILE', help: 'the tokens file, yours alone (chmod 600): made by the first add' }),
    option({ key: 'role', type: 'string', value: 'ROLE', help: 'add: read (sees runs) or steer (also decides, signals, cancels, pauses and forks)' }),
    option({ key: 'tenant', type: 'string', value: 'NAME', help: "add: the only tenant whose runs the token sees", defaultText: 'every tenant' }),
    { ...json, help: 'print JSON instead of lines (add: the token, its name, role and tenant)' },
  ],
  examples: [
    'durable-agent token add acme-ops --role steer --tenant acme --tokens-file ~/.config/durable-agent/tokens',
    'durable-agent token list --tokens-file ~/.config/durable-agent/tokens',
    'durable-agent token remove acme-ops --tokens-file ~/.config/durable-agent/tokens',
  ],
  parse: (values, { positionals }): TokenArgs => {
    const [given, name] = positionals as [string, string | undefined];
    if (!(TOKEN_ACTIONS as readonly string[]).includes(given)) throw new UsageError(`token takes one of ${TOKEN_ACTIONS.join(', ')}, not ${JSON.stringify(given)}.`);
    const action = given as (typeof TOKEN_ACTIONS)[number];
    if (values.tokensFile === undefined) throw new UsageError(`token ${action} needs --tokens-file FILE: the file that keeps the tokens' hashes.`);
    const target = { command: 'token' as const, tokensFile: values.tokensFile };
    if (action !== 'add' && (values.role !== undefined || values.tenant !== undefined)) throw new UsageError('--role and --tenant are for token add NAME.');
    if (action === 'list') {
      if (name !== undefined) throw new UsageError('token list takes no NAME: it lists every token.');
      return { ...target, action, json: values.json };
    }
    if (name === undefined) throw new UsageError(`token ${action} needs NAME: the token's name${action === 'remove' ? ' (token list shows them)' : ''}.`);
    if (action === 'remove') {
      if (values.json) throw new UsageError('--json is for token add and token list.');
      return { ...target, action, name };
    }
    if (values.role !== 'read' && values.role !== 'steer') throw new UsageError(`token add needs --role read or --role steer${values.role === undefined ? '' : `, not ${JSON.stringify(values.role)}`}: whether the token only sees runs or also steers them.`);
    return { ...target, action, name, role: values.role, tenant: values.tenant ?? null, json: values.json };
  },
});
