#!/usr/bin/env node
// The command's entry point: the compiled CLI in dist/ (npm run build writes it; npm ci, npm pack
// and a git install run the build). Plain JavaScript: nothing is compiled when the command starts.
const main = new URL('../dist/src/cli/main.js', import.meta.url);
let cli;
try {
  cli = await import(main.href);
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes(main.pathname)) throw error;
  process.stderr.write('durable-agent: the compiled CLI (dist/) is missing: run `npm run build` in the package\'s directory.\n');
  process.exit(1);
}
// Not process.exit straight away: on a pipe, output still queued would be dropped (process-end.ts).
cli.watchOutput();
await cli.exitWhenWritten(await cli.runCli(process.argv.slice(2)));
