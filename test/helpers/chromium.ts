/**
 * Debian's chromium driven by playwright-core (playwright's own browser download cannot work
 * here). .ci/run installs it when it is missing.
 */
import fs from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), as .ci/run does.`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
}
