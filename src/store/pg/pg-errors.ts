/**
 * The PostgreSQL store's own refusals, apart from the modules that talk to the database: their
 * declarations name no pg type, so durable-agent/errors can hand them on to a program that has
 * neither pg nor @types/pg installed.
 */
import { DurableAgentError, type ErrorKind } from '../../util/durable-agent-error.ts';

export class LeaseLostError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'stopped';
  override readonly name = 'LeaseLostError';
  constructor(
    readonly runId: string,
    readonly epoch: number,
    readonly currentEpoch: number | null,
    readonly currentOwner: string | null,
  ) {
    super(
      `This worker's lease on run ${runId} (epoch ${epoch}) is no longer valid` +
        (currentEpoch !== null && currentEpoch !== epoch ? `: another lease took over (epoch ${currentEpoch}${currentOwner ? `, ${currentOwner}` : ''})` : '') +
        '. It stopped driving the run and wrote nothing more for it; the current holder goes on from the last record.',
    );
  }
}

export class SchemaVersionError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'SchemaVersionError';
  constructor(
    readonly databaseVersion: number,
    readonly programVersion: number,
  ) {
    super(
      `The database's durable-agent schema is at version ${databaseVersion}, newer than this program's ${programVersion}. ` +
        `Nothing was changed: run a durable-agent release that knows schema ${databaseVersion}.`,
    );
  }
}
