/**
 * What the build reads and where it records a complete build, so that a test run can tell
 * whether dist/ is the build of the sources it tests (test/helpers/fresh-build.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Written last by a build that succeeded; outside dist/ so that the package does not carry it. */
export const BUILD_STAMP = path.join(ROOT, 'node_modules', '.cache', 'durable-agent', 'build-stamp');

const INPUT_DIRS = ['src', 'machines', 'visualizer', 'scripts'];
const INPUT_FILES = ['package.json', 'tsconfig.json', 'tsconfig.build.json'];

/** The newest modification time among the build's inputs, in ms. */
export function newestInputMtime(): number {
  let newest = 0;
  const files = [
    ...INPUT_FILES.map((file) => path.join(ROOT, file)),
    ...INPUT_DIRS.flatMap((dir) => fs.readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' }).map((file) => path.join(ROOT, dir, file))),
  ];
  for (const file of files) newest = Math.max(newest, fs.statSync(file).mtimeMs);
  return newest;
}

/** Why dist/ is not the build of the current sources, or null when it is. */
export function staleBuildReason(): string | null {
  if (!fs.existsSync(BUILD_STAMP)) return 'no complete build yet';
  const builtAt = Number(fs.readFileSync(BUILD_STAMP, 'utf8'));
  if (!(newestInputMtime() < builtAt)) return 'a source changed since the last build';
  return null;
}

export function recordBuild(startedAt: number): void {
  fs.mkdirSync(path.dirname(BUILD_STAMP), { recursive: true });
  fs.writeFileSync(BUILD_STAMP, String(startedAt));
}
