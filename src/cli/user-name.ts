import os from 'node:os';

/** Who decides, when --by does not say: the user's login name. */
export function userName(): string {
  try {
    return os.userInfo().username || 'cli';
  } catch {
    return 'cli';
  }
}
