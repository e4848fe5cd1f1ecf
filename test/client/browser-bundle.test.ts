/**
 * durable-agent/client goes into browser pages: bundled by esbuild for the browser, it builds,
 * carries none of Node and none of the runtime (its inputs are its own modules and the base
 * error class), and the bundle runs with only the web's globals.
 */
import path from 'node:path';
import vm from 'node:vm';
import { build } from 'esbuild';
import { expect, it } from 'vitest';
import { REPO } from '../helpers/cli.ts';

it('bundles for the browser from its own modules and the base error alone, with no Node import', async () => {
  const result = await build({
    entryPoints: [path.join(REPO, 'src', 'client', 'index.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    metafile: true,
    absWorkingDir: REPO,
    logLevel: 'silent',
  });
  expect(result.errors).toEqual([]);
  const inputs = Object.keys(result.metafile.inputs).sort();
  expect(inputs.filter((input) => !input.startsWith('src/client/') && input !== 'src/util/durable-agent-error.ts')).toEqual([]);
  expect(inputs).toContain('src/client/follow-run.ts');
  const [output] = Object.values(result.metafile.outputs);
  expect(output!.imports).toEqual([]);
  const code = result.outputFiles[0]!.text;
  expect(code).not.toMatch(/\bnode:|\brequire\(|\bprocess\.|\bBuffer\b/);
  expect(output!.exports.sort()).toEqual(['ApiError', 'ApiUnreachableError', 'createClient']);
  console.log(`[browser bundle] ${code.length} bytes unminified`);
});

it('runs with the web’s globals only: fetch, ReadableStream, TextDecoder, AbortController, setTimeout, URLSearchParams', async () => {
  const result = await build({
    entryPoints: [path.join(REPO, 'src', 'client', 'index.ts')],
    bundle: true,
    write: false,
    format: 'iife',
    globalName: 'durableAgentClient',
    platform: 'browser',
    target: 'es2022',
    logLevel: 'silent',
  });
  const frames = ['id: 1\ndata: {"type":"state","seq":1,"at":1,"state":"awaitingModel","turn":1}\n\n', 'data: {"type":"text-delta","text":"hi"}\n\n', 'id: 2\ndata: {"type":"end","seq":2,"state":"done","category":"done","result":"hi","problem":null}\n\n'];
  const asked: Array<{ url: string; headers: unknown }> = [];
  const fakeFetch = async (url: string, init: RequestInit) => {
    asked.push({ url, headers: init.headers });
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const text of frames) controller.enqueue(new TextEncoder().encode(text));
        controller.close();
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  };
  // A realm with the language's own objects and nothing of Node's: no process, no Buffer, no require.
  const page = vm.createContext({ fetch: fakeFetch, ReadableStream, TextDecoder, AbortController, setTimeout, clearTimeout, URLSearchParams });
  vm.runInContext(result.outputFiles[0]!.text, page);
  const types = await vm.runInContext(
    `(async () => {
      const client = durableAgentClient.createClient({ baseUrl: 'https://agents.example', token: 't' });
      const seen = [];
      for await (const event of client.followRun('r1')) seen.push(event.type);
      return seen.join(' ');
    })()`,
    page,
  );
  expect(types).toBe('state text-delta end');
  expect(asked).toEqual([{ url: 'https://agents.example/v1/runs/r1/events', headers: { accept: 'text/event-stream', authorization: 'Bearer t', 'cache-control': 'no-cache' } }]);
});

it('refuses a Node import in the client: the check can fail', async () => {
  const failed = await build({
    stdin: { contents: "import { createClient } from './src/client/index.ts';\nimport fs from 'node:fs';\nexport { createClient, fs };\n", resolveDir: REPO, loader: 'ts' },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    logLevel: 'silent',
  }).catch((error: { errors: Array<{ text: string }> }) => error.errors.map((e) => e.text));
  expect(failed).toEqual([expect.stringContaining('node:fs')]);
});
