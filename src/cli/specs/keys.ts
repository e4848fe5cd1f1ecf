/** `durable-agent keys rotate`: its options and their parse. */
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
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
  /** --seal-plain: the plain runs of DIR (or of the fleet) sealed too, each under a run key of its own (their content written again sealed). */
  sealPlain: boolean;
}

export const keysSpec = command({
  name: 'keys',
  words: ['rotate'],
  synopsis: 'keys rotate [--dir DIR | --database-url URL] [--seal-plain]',
  summary: "wrap every sealed run's key in DIR again under the first master key (a rotation)",
  description:
    'Wraps the run key of every sealed run of DIR/.durable-agent/ (its own run, its runs by id, archived ones) again\n' +
    'under the first key of DURABLE_AGENT_KEYS or DURABLE_AGENT_KEY_FILE, opening each with any key given: list the\n' +
    'new key first and keep the old one after it (k2:…,k1:…). Each run key is replaced whole, so a kill at any instant\n' +
    'loses nothing; run it again and it finishes what is left. Runs in flight go on writing. Once it reports no run\n' +
    'left under the old key, the old key may be dropped. New runs are sealed with the first key at once.\n' +
    "With --database-url (or DURABLE_AGENT_DATABASE_URL set and no --dir) it rewraps the keys of the fleet's runs in\n" +
    'PostgreSQL instead, a batch of runs to a short transaction: a kill loses nothing, and running it again finishes;\n' +
    "then the keys of the fleet's sealed schedules, one at a time.\n" +
    'With --seal-plain it also seals the plain runs of DIR (started without keys, which otherwise stay plain): each gets\n' +
    'a run key, and its journal, blobs and inbox entries are written again sealed, the journal whole beside the plain one\n' +
    'and then swapped in, so a kill leaves each run plain or sealed, both readable, and running it again finishes. A run\n' +
    'a live process drives is left plain and reported: run it again once that run stops.\n' +
    "On the fleet, --seal-plain seals each plain run in one transaction that holds its row (its records, task and inbox\n" +
    'rows), so a kill leaves each run wholly plain or wholly sealed, and then the plain schedules\' tasks. A run a live\n' +
    'worker holds is left plain and reported (exit 2).',
  options: [
    readDir,
    databaseUrl,
    option({ key: 'sealPlain', type: 'boolean', help: "with keys rotate: seal the plain runs of DIR (or of the fleet) too, each under a run key of its own (their content written again sealed)" }),
  ],
  examples: [
    'DURABLE_AGENT_KEY_FILE=~/.config/durable-agent/keys durable-agent keys rotate --dir my-project',
    'DURABLE_AGENT_KEY_FILE=~/.keys durable-agent keys rotate --database-url postgresql://db-host/agents',
    'DURABLE_AGENT_KEY_FILE=~/.keys durable-agent keys rotate --dir my-project --seal-plain',
    'DURABLE_AGENT_KEY_FILE=~/.keys durable-agent keys rotate --database-url postgresql://db/agents --seal-plain',
  ],
  parse: (values, { cwd }): KeysArgs => {
    if (values.dir !== undefined && values.databaseUrl !== undefined) {
      throw new UsageError('keys rotate rewraps the run keys of --dir or of the fleet at --database-url, not both: give one of them.');
    }
    return { command: 'keys', action: 'rotate', dir: values.dir ?? cwd, dirGiven: values.dir !== undefined, databaseUrl: values.databaseUrl ?? null, sealPlain: values.sealPlain === true };
  },
});
