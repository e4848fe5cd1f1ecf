#!/usr/bin/env node
// The command's entry point: load the TypeScript sources through tsx, run, exit with the code.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../src/cli/main.ts');
process.exit(await runCli(process.argv.slice(2)));
