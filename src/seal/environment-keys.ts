/**
 * The master keys of a process's environment: DURABLE_AGENT_KEYS (`k2:BASE64,k1:BASE64`, the
 * first sealing) or DURABLE_AGENT_KEY_FILE (the path of a file its owner alone reads, one
 * `ID:BASE64` a line). Read when first needed, once; never from a flag, which every user of the
 * machine reads in ps. The command line and the console both take their keys from here.
 */
import { KEYS_ENV, type KeysGiven, type MasterKeys, keyRingFromEnv, keyRingFromFile } from './keys.ts';
import { KeyListError } from './seal-errors.ts';

export const KEY_FILE_ENV = 'DURABLE_AGENT_KEY_FILE';

/** The keys of the environment, read when first needed (null when neither variable is set). */
export function environmentKeys(env: NodeJS.ProcessEnv = process.env): KeysGiven {
  let read: Promise<MasterKeys | null> | null = null;
  return () => {
    read ??= keysOfEnv(env);
    return read;
  };
}

async function keysOfEnv(env: NodeJS.ProcessEnv): Promise<MasterKeys | null> {
  const file = env[KEY_FILE_ENV]?.trim() ?? '';
  const inline = env[KEYS_ENV]?.trim() ?? '';
  if (file !== '' && inline !== '') throw new KeyListError(`${KEYS_ENV} and ${KEY_FILE_ENV}`, 'both are set; give the keys in one of them');
  if (file !== '') return keyRingFromFile(file);
  return keyRingFromEnv(env);
}
