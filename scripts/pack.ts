/**
 * npm run pack [-- DEST]: the package's tarball, as it is published, written into DEST (default:
 * this checkout), e.g. the project that installs it. npm decides what goes in (the
 * `files` of package.json, the README, the licence); the manifest goes in without `scripts`:
 * `prepare` builds dist/ from the sources in a checkout, which the tarball does not hold, and npm
 * warns about every install script a user's install would meet. Publish the tarball it prints.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './build-state.ts';

/** The manifest as a user installs it: without the scripts that build and test a checkout. */
export function packedManifest(manifest: Record<string, unknown>): Record<string, unknown> {
  const { scripts: _scripts, ...rest } = manifest;
  return rest;
}

/** Packs ROOT into `dest` (made if missing: the project that installs it); returns the tarball's path and the files npm put in it. */
export function packInto(dest: string): { tarball: string; files: string[] } {
  fs.mkdirSync(dest, { recursive: true });
  const listed = npm(['pack', '--dry-run', '--json', '--ignore-scripts'], ROOT);
  const files: string[] = JSON.parse(listed)[0].files.map((file: { path: string }) => file.path);
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'da-pack-'));
  try {
    for (const file of files) {
      fs.mkdirSync(path.dirname(path.join(stage, file)), { recursive: true });
      fs.copyFileSync(path.join(ROOT, file), path.join(stage, file));
    }
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(packedManifest(manifest), null, 2)}\n`);
    const packed = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', path.resolve(dest)], stage))[0];
    return { tarball: path.join(path.resolve(dest), packed.filename), files: packed.files.map((file: { path: string }) => file.path) };
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

function npm(args: string[], cwd: string): string {
  const run = spawnSync('npm', args, { cwd, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`npm ${args.join(' ')} failed in ${cwd}:\n${run.stderr}`);
  return run.stdout;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { tarball, files } = packInto(process.argv[2] ?? ROOT);
  console.log(`pack: ${tarball} (${files.length} files, no install scripts)`);
}
