/** `durable-agent keys rotate`: its options and their parse. */
import { command } from '../options/command.ts';
import { readDir } from '../options/target.ts';

/** keys rotate: the state folder whose runs' keys are wrapped again under the first master key. */
export interface KeysArgs {
  command: 'keys';
  action: 'rotate';
  dir: string;
  dirGiven: boolean;
}

export const keysSpec = command({
  name: 'keys',
  words: ['rotate'],
  synopsis: 'keys rotate [--dir DIR]',
  summary: "wrap every sealed run's key in DIR again under the first master key (a rotation)",
  description:
    'Wraps the run key of every sealed run of DIR/.durable-agent/ (its own run, its runs by id, archived ones) again\n' +
    'under the first key of DURABLE_AGENT_KEYS or DURABLE_AGENT_KEY_FILE, opening each with any key given: list the\n' +
    'new key first and keep the old one after it (k2:…,k1:…). Each run key is replaced whole, so a kill at any instant\n' +
    'loses nothing; run it again and it finishes what is left. Runs in flight go on writing. Once it reports no run\n' +
    'left under the old key, the old key may be dropped. New runs are sealed with the first key at once.',
  options: [readDir],
  examples: ['DURABLE_AGENT_KEY_FILE=~/.config/durable-agent/keys durable-agent keys rotate --dir my-project'],
  parse: (values, { cwd }): KeysArgs => ({ command: 'keys', action: 'rotate', dir: values.dir ?? cwd, dirGiven: values.dir !== undefined }),
});
