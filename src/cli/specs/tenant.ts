/** `durable-agent tenant set NAME` and `tenant list`: each tenant's share of the fleet and its limit. */
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { json } from '../options/output.ts';
import { databaseUrl } from '../options/target.ts';
import { UsageError } from '../usage-error.ts';

export type TenantArgs = TenantSetArgs | TenantListArgs;

export interface TenantSetArgs {
  command: 'tenant';
  action: 'set';
  databaseUrl: string | null;
  name: string;
  weight: number | undefined;
  /** null: --no-max-running (no limit); undefined: as it was. */
  maxRunning: number | null | undefined;
  /** Each: null with its --no-… (no quota or limit), undefined: as it was. */
  maxCostUsdMonth: number | null | undefined;
  maxTokensMonth: number | null | undefined;
  maxRequestsMinute: number | null | undefined;
  maxTokensMinute: number | null | undefined;
}

/** The settings that may be taken away, each with its --no-… flag: [value key, no key, flag]. */
const CLEARABLE = [
  ['maxRunning', 'noMaxRunning', 'max-running'],
  ['maxCostUsdMonth', 'noMaxCostUsdMonth', 'max-cost-usd-month'],
  ['maxTokensMonth', 'noMaxTokensMonth', 'max-tokens-month'],
  ['maxRequestsMinute', 'noMaxRequestsMinute', 'max-requests-minute'],
  ['maxTokensMinute', 'noMaxTokensMinute', 'max-tokens-minute'],
] as const;

export interface TenantListArgs {
  command: 'tenant';
  action: 'list';
  databaseUrl: string | null;
  json: boolean;
}

export const tenantSpec = command({
  name: 'tenant',
  words: ['set'],
  wordsOptional: true,
  arguments: [{ name: 'NAME', help: 'the tenant (or list, for every tenant)' }],
  synopsis: 'tenant (set NAME [--weight N] [--max-cost-usd-month USD] … | list) [options]',
  summary: "set a tenant's share of the fleet's workers, its limits and monthly quotas; list them",
  description:
    "set NAME: a tenant's weight (its share of the claims among the tenants with work, default 1), the most\n" +
    'of its runs driven at once across the fleet, its monthly quotas (cost at list prices, tokens; a run stops at\n' +
    'a budget before a model call once its tenant spent one this month, UTC) and its rate limits of model calls\n' +
    '(calls and tokens a minute: a call over them waits). Default: none; what is not given stays as it was, and a\n' +
    '--no-… flag takes one away. Setting a quota lets the runs stopped at it go on (each checks it again).\n' +
    'list: every tenant set or with runs not finished, with its runs queued and driven and its spend this month.',
  options: [
    databaseUrl,
    option({ key: 'weight', type: 'integer', value: 'N', help: "the tenant's share of the fleet's claims, against the others'", min: 1, max: 1_000, defaultText: '1', api: 'TenantSettings.weight' }),
    option({ key: 'maxRunning', type: 'integer', value: 'N', help: 'the most of its runs driven at once across the fleet', min: 1, max: 100_000, defaultText: 'no limit', api: 'TenantSettings.maxRunning' }),
    option({ key: 'noMaxRunning', type: 'boolean', help: 'take its limit of runs driven at once away', api: 'TenantSettings.maxRunning' }),
    option({ key: 'maxCostUsdMonth', type: 'decimal', value: 'USD', help: 'what its runs may cost in a calendar month (UTC) at list prices', min: 0.0001, max: 1_000_000, defaultText: 'no quota', api: 'TenantSettings.maxCostUsdMonth' }),
    option({ key: 'noMaxCostUsdMonth', type: 'boolean', help: 'take its monthly cost quota away', api: 'TenantSettings.maxCostUsdMonth' }),
    option({ key: 'maxTokensMonth', type: 'integer', value: 'N', help: 'the tokens its runs may use in a calendar month (UTC)', min: 1, max: 1_000_000_000_000, defaultText: 'no quota', api: 'TenantSettings.maxTokensMonth' }),
    option({ key: 'noMaxTokensMonth', type: 'boolean', help: 'take its monthly token quota away', api: 'TenantSettings.maxTokensMonth' }),
    option({ key: 'maxRequestsMinute', type: 'integer', value: 'N', help: 'the most model calls its runs make in a minute, fleet-wide', min: 1, max: 1_000_000, defaultText: 'no limit', api: 'TenantSettings.maxRequestsMinute' }),
    option({ key: 'noMaxRequestsMinute', type: 'boolean', help: 'take its limit of model calls a minute away', api: 'TenantSettings.maxRequestsMinute' }),
    option({ key: 'maxTokensMinute', type: 'integer', value: 'N', help: "the most tokens its runs' replies use in a minute, fleet-wide", min: 1, max: 1_000_000_000_000, defaultText: 'no limit', api: 'TenantSettings.maxTokensMinute' }),
    option({ key: 'noMaxTokensMinute', type: 'boolean', help: 'take its limit of tokens a minute away', api: 'TenantSettings.maxTokensMinute' }),
    json,
  ],
  examples: ['durable-agent tenant set acme --weight 2 --max-running 5', 'durable-agent tenant set acme --max-cost-usd-month 200 --max-requests-minute 60', 'durable-agent tenant list'],
  parse: (values, { positionals, words }): TenantArgs => {
    const target = { command: 'tenant' as const, databaseUrl: values.databaseUrl ?? null };
    const [name] = positionals;
    const given = (key: string) => (values as Record<string, unknown>)[key] !== undefined && (values as Record<string, unknown>)[key] !== false;
    if (words.length === 0) {
      if (name !== 'list') throw new UsageError(`tenant takes set NAME or list, not ${JSON.stringify(name)}.`);
      if (values.weight !== undefined || CLEARABLE.some(([key, no]) => given(key) || given(no))) throw new UsageError('--weight, the limits and the quotas (and their --no-… flags) are for tenant set NAME.');
      return { ...target, action: 'list', json: values.json };
    }
    for (const [key, no, flag] of CLEARABLE) {
      if (given(key) && given(no)) throw new UsageError(`--${flag} and --no-${flag} say opposite things: give one of them.`);
    }
    if (values.weight === undefined && !CLEARABLE.some(([key, no]) => given(key) || given(no))) {
      throw new UsageError('tenant set NAME needs --weight N, a limit or a quota (--max-running N, --max-cost-usd-month USD, …) or a --no-… flag: what to set.');
    }
    const setting = (key: (typeof CLEARABLE)[number][0], no: (typeof CLEARABLE)[number][1]) => (values[no] ? null : values[key]);
    return {
      ...target,
      action: 'set',
      name: name!,
      weight: values.weight,
      maxRunning: setting('maxRunning', 'noMaxRunning'),
      maxCostUsdMonth: setting('maxCostUsdMonth', 'noMaxCostUsdMonth'),
      maxTokensMonth: setting('maxTokensMonth', 'noMaxTokensMonth'),
      maxRequestsMinute: setting('maxRequestsMinute', 'noMaxRequestsMinute'),
      maxTokensMinute: setting('maxTokensMinute', 'noMaxTokensMinute'),
    };
  },
});
