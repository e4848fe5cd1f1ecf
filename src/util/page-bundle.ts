/**
 * Bundles a browser page's script (the visualizer's, the console's) into one script with
 * esbuild. Run by the build (scripts/build.ts), which writes the result into dist/; the
 * installed package reads that file and never loads esbuild, a development dependency. Running
 * from the TypeScript sources (tests, tsx) bundles on demand instead.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The page's entry module (a file URL or a path) as one minified script for the browser. */
export async function bundlePageScript(entry: URL | string): Promise<string> {
  const result = await build({
    entryPoints: [entry instanceof URL ? fileURLToPath(entry) : entry],
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
