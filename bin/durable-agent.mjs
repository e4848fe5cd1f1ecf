#!/usr/bin/env node
// The command's entry point: load the TypeScript sources through tsx, run, exit with the code.
// tsx is told to use this package's tsconfig, not one it might find in the user's directory.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
const { runCli } = await import('../src/cli/main.ts');
process.exit(await runCli(process.argv.slice(2)));
