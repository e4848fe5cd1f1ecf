/** `durable-agent keys rotate`: its options and their parse. */
import { command } from '../options/command.ts';
import { databaseUrl, readDir } from '../options/target.ts';
import { UsageError } from '../usage-error.ts';

/** keys rotate: the state folder whose runs' keys are wrapped again under the first master key. */
export interface KeysArgs {
  command: 'keys';
  action: 'rotate';
  dir: string;
  dirGiven: boolean;
  /** Set: the fleet's runs in PostgreSQL instead of DIR's. */
  databaseUrl: string | null;
}

export const keysSpec = command({
  name: 'keys',
  words: ['rotate'],
  synopsis: 'keys rotate [--dir DIR | --database-url URL]',
  summary: "wrap every sealed run's key in DIR again under the first master key (a rotation)",
  description:
    'Wraps the run key of every sealed run of DIR/.durable-agent/ (its own run, its runs by id, archived ones) again\n' +
    'under the first key of DURABLE_AGENT_KEYS or DURABLE_AGENT_KEY_FILE, opening each with any key given: list the\n' +
    'new key first and keep the old one after it (k2:…,k1:…). Each run key is replaced whole, so a kill at any instant\n' +
    'loses nothing; run it again and it finishes what is left. Runs in flight go on writing. Once it reports no run\n' +
    'left under the old key, the old key may be dropped. New runs are sealed with the first key at once.\n' +
    "With --database-url (or DURABLE_AGENT_DATABASE_URL set and no --dir) it rewraps the keys of the fleet's runs in\n" +
    'PostgreSQL instead, a batch of runs to a short transaction: a kill loses nothing, and running it again finishes;\n' +
    "then the keys of the fleet's sealed schedules, one at a time.",
  options: [readDir, databaseUrl],
  examples: [
    'DURABLE_AGENT_KEY_FILE=~/.config/durable-agent/keys durable-agent keys rotate --dir my-project',
    'DURABLE_AGENT_KEY_FILE=~/.keys durable-agent keys rotate --database-url postgresql://db-host/agents',
  ],
  parse: (values, { cwd }): KeysArgs => {
    if (values.dir !== undefined && values.databaseUrl !== undefined) {
      throw new UsageError('keys rotate rewraps the run keys of --dir or of the fleet at --database-url, not both: give one of them.');
    }
    return { command: 'keys', action: 'rotate', dir: values.dir ?? cwd, dirGiven: values.dir !== undefined, databaseUrl: values.databaseUrl ?? null };
  },
});
