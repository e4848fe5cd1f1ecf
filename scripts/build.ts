/**
 * npm run build: the package as users install it, in dist/ (run by `prepare`, so `npm ci`,
 * `npm pack` and a git install build it too).
 *
 *   1. tsc -p tsconfig.build.json: one .js and one .d.ts per source file, the sources' `.ts`
 *      import specifiers rewritten to `.js` (rewriteRelativeImportExtensions).
 *   2. The .d.ts files keep the sources' `.ts` specifiers (tsc copies them as written): rewrite
 *      them to `.js` too, so that every TypeScript version and resolution mode reads them.
 *   3. Each browser page's script (the visualizer's, the console's) bundled once, here, with
 *      esbuild, and its style copied: `viz` and `console` read both from dist/ and never load
 *      esbuild. tsconfig.build.json leaves the pages' sources out: only their bundles ship.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { bundlePageScript } from '../src/util/page-bundle.ts';
import { CONSOLE_SCRIPT_ENTRY, CONSOLE_SCRIPT_FILE, CONSOLE_STYLE_FILE } from '../src/console/page-assets.ts';
import { PAGE_SCRIPT_ENTRY, PAGE_SCRIPT_FILE, PAGE_STYLE_FILE } from '../visualizer/page-assets.ts';
import { recordBuild, ROOT } from './build-state.ts';

const DIST = path.join(ROOT, 'dist');
// Inputs changed after this instant make the build stale (fs.rmSync below may take a moment).
const started = Date.now();

fs.rmSync(DIST, { recursive: true, force: true });

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
if (compiled.status !== 0) {
  console.error('build: tsc failed (see above); dist/ is incomplete.');
  process.exit(1);
}

const RELATIVE_TS = /((?:from|import)\s*\(?\s*)(['"])(\.\.?\/[^'"]*?)\.tsx?\2/g;
const files = fs.readdirSync(DIST, { recursive: true, encoding: 'utf8' }).map((file) => path.join(DIST, file));
for (const file of files.filter((f) => f.endsWith('.d.ts'))) {
  const text = fs.readFileSync(file, 'utf8');
  const rewritten = text.replace(RELATIVE_TS, '$1$2$3.js$2');
  if (rewritten !== text) fs.writeFileSync(file, rewritten);
}
const leftover = files.filter((f) => /\.(js|d\.ts)$/.test(f) && fs.readFileSync(f, 'utf8').search(RELATIVE_TS) !== -1);
if (leftover.length) {
  console.error(`build: .ts import specifiers left in ${leftover.map((f) => path.relative(ROOT, f)).join(', ')}`);
  process.exit(1);
}

/** A browser page: its folder of sources, its script's entry and the two files the package reads. */
interface PageBuild {
  dir: string;
  entry: URL;
  script: string;
  style: string;
}
const PAGES: PageBuild[] = [
  { dir: 'visualizer/page', entry: PAGE_SCRIPT_ENTRY, script: PAGE_SCRIPT_FILE, style: PAGE_STYLE_FILE },
  { dir: 'src/console/page', entry: CONSOLE_SCRIPT_ENTRY, script: CONSOLE_SCRIPT_FILE, style: CONSOLE_STYLE_FILE },
];
for (const page of PAGES) {
  const out = path.join(DIST, page.dir);
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, page.script), await bundlePageScript(page.entry));
  fs.copyFileSync(path.join(ROOT, page.dir, 'style.css'), path.join(out, page.style));
}
// The bundler's module is for the build and for runs from the sources only: the package does not ship it.
for (const ext of ['.js', '.d.ts']) fs.rmSync(path.join(DIST, 'src', 'util', `page-bundle${ext}`));

recordBuild(started);
console.log(`build: dist/ written in ${((Date.now() - started) / 1000).toFixed(1)} s`);
