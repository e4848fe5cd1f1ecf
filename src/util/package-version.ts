/**
 * This package's version, from its package.json: found by walking up from this module, so it
 * works from src/cli/ and from a build one level deeper alike, without importing JSON.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE_NAME = 'durable-agent';

export function packageVersion(from: string = import.meta.url): string {
  let dir = path.dirname(fileURLToPath(from));
  for (;;) {
    const version = versionIn(path.join(dir, 'package.json'));
    if (version !== null) return version;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json named ${PACKAGE_NAME} above ${fileURLToPath(from)}`);
    dir = parent;
  }
}

function versionIn(file: string): string | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const pkg = JSON.parse(text) as { name?: unknown; version?: unknown };
  return pkg.name === PACKAGE_NAME && typeof pkg.version === 'string' ? pkg.version : null;
}
