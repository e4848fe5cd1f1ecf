/** Where the fleet database is: --database-url, or DURABLE_AGENT_DATABASE_URL. (No pg import: the CLI loads this at start-up.) */
import { DurableAgentError, type ErrorKind } from '../../util/durable-agent-error.ts';
export class DatabaseUrlMissingError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'DatabaseUrlMissingError';
  constructor(readonly command: string) {
    super(`${command} needs a PostgreSQL database: pass --database-url postgresql://user@host:5432/db (or set DURABLE_AGENT_DATABASE_URL).`);
  }
}

export function databaseUrlOf(given: string | null, env: NodeJS.ProcessEnv, command: string): string {
  const url = given ?? env.DURABLE_AGENT_DATABASE_URL;
  if (!url) throw new DatabaseUrlMissingError(command);
  return url;
}

