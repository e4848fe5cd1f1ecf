/**
 * vitest globalSetup: the CLI tests run the package as users do (bin/durable-agent.mjs runs the
 * compiled dist/), so dist/ must be the build of the sources under test. `npm test` builds
 * first; a single `npx vitest run <file>` builds here when a source is newer than the last
 * complete build, and says so.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT, staleBuildReason } from '../../scripts/build-state.ts';

export default function buildIfStale(): void {
  const reason = staleBuildReason();
  if (reason === null) return;
  console.log(`[fresh-build] building dist/ first (${reason})`);
  const build = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'build.ts')], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed: the tests would run a stale or missing dist/. Fix the build first.');
}
