/**
 * Bundles the page's script (visualizer/page/) into one browser script with esbuild. Run by the
 * build (scripts/build.ts), which writes the result into dist/; the installed package reads that
 * file and never loads esbuild, a development dependency. Running from the TypeScript sources
 * (tests, tsx) bundles on demand instead.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const PAGE_SCRIPT_ENTRY = fileURLToPath(new URL('./page/main.ts', import.meta.url));

export async function bundlePageScript(): Promise<string> {
  const result = await build({
    entryPoints: [PAGE_SCRIPT_ENTRY],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}
