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
}

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
  synopsis: 'tenant (set NAME [--weight N] [--max-running N | --no-max-running] | list) [options]',
  summary: "set a tenant's share of the fleet's workers and the most of its runs driven at once; list them",
  description:
    "set NAME: a tenant's weight (its share of the claims among the tenants with work, default 1) and the most\n" +
    'of its runs driven at once across the fleet (default: no limit); what is not given stays as it was, and the\n' +
    "workers' next claims follow it. list: every tenant set or with runs not finished, with its runs queued and driven.",
  options: [
    databaseUrl,
    option({ key: 'weight', type: 'integer', value: 'N', help: "the tenant's share of the fleet's claims, against the others'", min: 1, max: 1_000, defaultText: '1', api: 'TenantSettings.weight' }),
    option({ key: 'maxRunning', type: 'integer', value: 'N', help: 'the most of its runs driven at once across the fleet', min: 1, max: 100_000, defaultText: 'no limit', api: 'TenantSettings.maxRunning' }),
    option({ key: 'noMaxRunning', type: 'boolean', help: 'take its limit of runs driven at once away', api: 'TenantSettings.maxRunning' }),
    json,
  ],
  examples: ['durable-agent tenant set acme --weight 2 --max-running 5', 'durable-agent tenant list'],
  parse: (values, { positionals, words }): TenantArgs => {
    const target = { command: 'tenant' as const, databaseUrl: values.databaseUrl ?? null };
    const [name] = positionals;
    if (words.length === 0) {
      if (name !== 'list') throw new UsageError(`tenant takes set NAME or list, not ${JSON.stringify(name)}.`);
      if (values.weight !== undefined || values.maxRunning !== undefined || values.noMaxRunning) throw new UsageError('--weight, --max-running and --no-max-running are for tenant set NAME.');
      return { ...target, action: 'list', json: values.json };
    }
    if (values.maxRunning !== undefined && values.noMaxRunning) throw new UsageError('--max-running N and --no-max-running say opposite things: give one of them.');
    if (values.weight === undefined && values.maxRunning === undefined && !values.noMaxRunning) throw new UsageError('tenant set NAME needs --weight N, --max-running N or --no-max-running: what to set.');
    return { ...target, action: 'set', name: name!, weight: values.weight, maxRunning: values.noMaxRunning ? null : values.maxRunning };
  },
});
