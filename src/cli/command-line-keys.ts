/**
 * The master keys a command line holds: those of its environment (DURABLE_AGENT_KEYS or
 * DURABLE_AGENT_KEY_FILE, see src/seal/environment-keys.ts), read when a store first needs them,
 * once per command; never from a flag, which every user of the machine reads in ps.
 */
import { environmentKeys, KEY_FILE_ENV } from '../seal/environment-keys.ts';
import type { KeysGiven } from '../seal/keys.ts';

export { KEY_FILE_ENV };

/** The keys of the environment, read when first needed (null when neither variable is set). */
export function commandLineKeys(env: NodeJS.ProcessEnv = process.env): KeysGiven {
  return environmentKeys(env);
}
