/**
 * The console page's script and style. The build bundles the script from page/ (its entry is
 * page/main.ts) and copies the style, both into dist/src/console/page/, so the installed console
 * only reads two files; from the TypeScript sources (tests, tsx) the script is bundled on demand.
 */
import fs from 'node:fs';

const PAGE_DIR = new URL('./page/', import.meta.url);
/** The script's entry module, which the build bundles into CONSOLE_SCRIPT_FILE. */
export const CONSOLE_SCRIPT_ENTRY = new URL('./page/main.ts', import.meta.url);
export const CONSOLE_SCRIPT_FILE = 'console.js';
export const CONSOLE_STYLE_FILE = 'style.css';

/** True when this module runs from its .ts source, not from the build in dist/. */
const fromSource = import.meta.url.endsWith('.ts');

export async function consoleScript(): Promise<string> {
  if (fromSource) return (await import('../util/page-bundle.ts')).bundlePageScript(CONSOLE_SCRIPT_ENTRY);
  return fs.promises.readFile(new URL(CONSOLE_SCRIPT_FILE, PAGE_DIR), 'utf8');
}

export function consoleStyle(): Promise<string> {
  return fs.promises.readFile(new URL(CONSOLE_STYLE_FILE, PAGE_DIR), 'utf8');
}
