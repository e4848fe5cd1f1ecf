/**
 * Every error the package exports says what it is: it extends DurableAgentError and its class
 * declares a kind, from which the command line's exit code follows. Read from every entry of the
 * built package (package.json "exports", as a program imports them), and durable-agent/errors
 * holds each of them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import * as errors from '../../src/errors.ts';
import { EXIT_CODE_OF_KIND } from '../../src/util/durable-agent-error.ts';
import { REPO } from '../helpers/cli.ts';

type ErrorClass = (new (...args: never[]) => Error) & { kind?: unknown };

const manifest = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));

/** Each entry a program can import, by its specifier, loaded from dist/ (test/helpers/fresh-build.ts keeps it the build of the sources). */
async function builtEntries(): Promise<Map<string, Record<string, unknown>>> {
  const entries = new Map<string, Record<string, unknown>>();
  for (const [subpath, target] of Object.entries<string | { default: string }>(manifest.exports)) {
    if (typeof target === 'string') continue; // ./package.json
    const specifier = subpath === '.' ? 'durable-agent' : `durable-agent/${subpath.slice(2)}`;
    entries.set(specifier, await import(pathToFileURL(path.join(REPO, target.default)).href));
  }
  return entries;
}

function errorClassesOf(entry: Record<string, unknown>): Array<[string, ErrorClass]> {
  return Object.entries(entry).filter((pair): pair is [string, ErrorClass] => typeof pair[1] === 'function' && (pair[1] as { prototype?: unknown }).prototype instanceof Error);
}

it('every error class of every entry of the built package extends DurableAgentError, declares a kind, and is in durable-agent/errors', async () => {
  const entries = await builtEntries();
  expect([...entries.keys()]).toEqual(expect.arrayContaining(['durable-agent', 'durable-agent/errors', 'durable-agent/postgres', 'durable-agent/testing', 'durable-agent/client']));
  const main = entries.get('durable-agent')!;
  const catalog = entries.get('durable-agent/errors')!;
  const base = main.DurableAgentError as ErrorClass;
  const kinds = main.ERROR_KINDS as readonly unknown[];
  const classes = [...entries].flatMap(([specifier, entry]) => errorClassesOf(entry).map(([name, errorClass]) => ({ name: `${specifier} ${name}`, errorClass })));
  const distinct = new Set(classes.map(({ errorClass }) => errorClass));
  distinct.delete(base);
  expect(distinct.size).toBeGreaterThan(40);
  const wrong = classes.filter(({ errorClass }) => errorClass !== base && (!(errorClass.prototype instanceof base) || !kinds.includes(errorClass.kind)));
  expect(wrong.map(({ name }) => name)).toEqual([]);
  const inCatalog = new Set(Object.values(catalog));
  expect(classes.filter(({ errorClass }) => !inCatalog.has(errorClass)).map(({ name }) => name)).toEqual([]);
});

it('the main entry keeps only the base classes: the others are in durable-agent/errors', async () => {
  const main = (await builtEntries()).get('durable-agent')!;
  expect(errorClassesOf(main).map(([name]) => name).sort()).toEqual(['DurableAgentError', 'OptionalDependencyMissingError']);
});

it('an instance reads its class’s kind and the exit code it maps to; a simulated crash exits as a kill would', () => {
  const refused = new errors.ForkRefusedError('/tmp/run', 'no-such-record', 'record 9 does not exist');
  expect([refused.kind, refused.exitCode]).toEqual(['refused', EXIT_CODE_OF_KIND.refused]);
  const model = new errors.ModelCallError('overloaded', 529, true);
  expect([model.kind, model.exitCode]).toEqual(['model', 3]);
  const crash = new errors.SimulatedCrash('after-save-a:1');
  expect([crash.kind, crash.exitCode]).toEqual(['stopped', 137]);
  const missing = new errors.PgMissingError(new Error('cannot find pg'));
  expect(missing).toBeInstanceOf(errors.OptionalDependencyMissingError);
  expect([missing.kind, missing.packageName, missing.name]).toEqual(['refused', 'pg', 'PgMissingError']);
});
