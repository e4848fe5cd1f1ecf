/**
 * Every error the package exports says what it is: it extends DurableAgentError and its class
 * declares a kind, from which the command line's exit code follows. Read from both entries.
 */
import { expect, it } from 'vitest';
import * as main from '../src/index.ts';
import * as postgres from '../src/postgres.ts';
import { DurableAgentError, ERROR_KINDS, EXIT_CODE_OF_KIND } from '../src/util/durable-agent-error.ts';

type ErrorClass = (new (...args: never[]) => Error) & { kind?: unknown };

function errorClassesOf(entry: Record<string, unknown>): Array<[string, ErrorClass]> {
  return Object.entries(entry).filter((pair): pair is [string, ErrorClass] => typeof pair[1] === 'function' && (pair[1] as { prototype?: unknown }).prototype instanceof Error);
}

it('every error class of both entries extends DurableAgentError and declares a kind', () => {
  const classes = [...errorClassesOf(main), ...errorClassesOf(postgres)].filter(([, errorClass]) => errorClass !== DurableAgentError);
  expect(classes.length).toBeGreaterThan(40);
  const wrong = classes.filter(([, errorClass]) => !(errorClass.prototype instanceof DurableAgentError) || !(ERROR_KINDS as readonly unknown[]).includes(errorClass.kind));
  expect(wrong.map(([name]) => name)).toEqual([]);
});

it('an instance reads its class’s kind and the exit code it maps to; a simulated crash exits as a kill would', () => {
  const refused = new main.ForkRefusedError('/tmp/run', 'no-such-record', 'record 9 does not exist');
  expect([refused.kind, refused.exitCode]).toEqual(['refused', EXIT_CODE_OF_KIND.refused]);
  const model = new main.ModelCallError('overloaded', 529, true);
  expect([model.kind, model.exitCode]).toEqual(['model', 3]);
  const crash = new main.SimulatedCrash('after-save-a:1');
  expect([crash.kind, crash.exitCode]).toEqual(['stopped', 137]);
  const missing = new main.PgMissingError(new Error('cannot find pg'));
  expect(missing).toBeInstanceOf(main.OptionalDependencyMissingError);
  expect([missing.kind, missing.packageName, missing.name]).toEqual(['refused', 'pg', 'PgMissingError']);
});
