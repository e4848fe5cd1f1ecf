/**
 * The page's script and style. The build puts both beside the compiled visualizer
 * (dist/visualizer/page/page.js and style.css), so `viz` only reads two files; from the
 * TypeScript sources (tests, tsx) the script is bundled on demand.
 */
import fs from 'node:fs';

const PAGE_DIR = new URL('./page/', import.meta.url);
/** The script's entry module, which the build bundles into PAGE_SCRIPT_FILE. */
export const PAGE_SCRIPT_ENTRY = new URL('./page/main.ts', import.meta.url);
export const PAGE_SCRIPT_FILE = 'page.js';
export const PAGE_STYLE_FILE = 'style.css';

/** True when this module runs from its .ts source, not from the build in dist/. */
const fromSource = import.meta.url.endsWith('.ts');

export async function pageScript(): Promise<string> {
  if (fromSource) return (await import('../src/util/page-bundle.ts')).bundlePageScript(PAGE_SCRIPT_ENTRY);
  return fs.promises.readFile(new URL(PAGE_SCRIPT_FILE, PAGE_DIR), 'utf8');
}

export function pageStyle(): Promise<string> {
  return fs.promises.readFile(new URL(PAGE_STYLE_FILE, PAGE_DIR), 'utf8');
}
