/**
 * The Claude options of run and demo on the command line (--thinking, --temperature,
 * --tool-choice, --stop-sequences, --service-tier, --api-version, --price), and what a resume
 * makes of them: the run's pinned ones when none are given, a refusal naming what differs when
 * others are, --allow-request-change to go on anyway (for that process).
 */
import { describe, expect, it } from 'vitest';
import { type CliArgs, parseArgs, UsageError } from '../../src/cli/args.ts';
import { modelSetupOf, type StoredRun } from '../../src/cli/model-setup.ts';
import type { ClaudeArgs } from '../../src/cli/options/model.ts';
import { pinnedRequestOf, requestDifferences, RequestOptionsChangedError, requestWords, withGiven } from '../../src/model/pinned-request.ts';
import { RequestOptionError } from '../../src/model/request-options.ts';
import type { JournalHeader } from '../../src/store/journal/journal-record.ts';

const CWD = '/work/here';
const RUN = ['run', '--model', 'm', '--task', 't'];
const PRICE = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

function claudeOf(...argv: string[]): ClaudeArgs | undefined {
  return (parseArgs(argv, CWD) as Extract<CliArgs, { command: 'run' | 'demo' }>).claude;
}

function refusal(...argv: string[]): string {
  try {
    parseArgs(argv, CWD);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`accepted: ${argv.join(' ')}`);
}

function stored(header: Partial<JournalHeader>): StoredRun {
  return { header: { format: 'durable-agent/journal', version: 1, runId: 'r', createdAt: 0, ...header }, location: '/work/here/.durable-agent' };
}

describe('the Claude options of run and demo', () => {
  it('read into the API’s shapes', () => {
    expect(
      claudeOf(...RUN, '--thinking', '4000', '--api-version', '2023-06-01', '--temperature', '1', '--tool-choice', 'tool:read_file', '--stop-sequences', 'END,###', '--service-tier', 'standard_only', '--price', 'input=3,output=15,cache-read=0.3,cache-write=3.75'),
    ).toEqual({
      request: {
        thinking: { type: 'enabled', budget_tokens: 4_000 },
        apiVersion: '2023-06-01',
        temperature: 1,
        toolChoice: { type: 'tool', name: 'read_file' },
        stopSequences: ['END', '###'],
        serviceTier: 'standard_only',
      },
      price: PRICE,
      allowRequestChange: false,
    });
    expect(claudeOf(...RUN, '--thinking', 'adaptive', '--tool-choice', 'none')?.request).toEqual({ thinking: { type: 'adaptive' }, toolChoice: { type: 'none' } });
    expect(claudeOf('run', '--model', 'm', '--resume', '--thinking', 'off', '--allow-request-change')).toEqual({ request: { thinking: null }, price: undefined, allowRequestChange: true });
    expect(claudeOf(...RUN)).toBeUndefined();
    expect(claudeOf('demo')).toBeUndefined();
    expect(claudeOf('demo', '--model', 'm', '--price', 'cache-write=3.75,cache-read=0.3,output=15,input=3')?.price).toEqual(PRICE);
  });

  it('refuse what is none of their values, saying what each takes (exit 2, nothing run)', () => {
    expect(refusal(...RUN, '--thinking', '1000')).toBe('--thinking takes a budget of thinking tokens (1024 or more, below --max-tokens), adaptive or off, not "1000".');
    expect(refusal(...RUN, '--thinking', 'lots')).toContain('not "lots"');
    expect(refusal(...RUN, '--tool-choice', 'required')).toBe('--tool-choice takes auto, any, none or tool:NAME (tool:read_file), not "required".');
    expect(refusal(...RUN, '--tool-choice', 'tool:')).toContain('not "tool:"');
    expect(refusal(...RUN, '--stop-sequences', 'END,,###')).toContain('none of them empty');
    expect(refusal(...RUN, '--service-tier', 'priority')).toBe('--service-tier takes auto or standard_only, not "priority".');
    expect(refusal(...RUN, '--api-version', 'latest')).toContain('a date (2023-06-01)');
    expect(refusal(...RUN, '--temperature', '1.5')).toContain('--temperature takes a number from 0 to 1');
    expect(refusal(...RUN, '--price', 'input=3,output=15')).toBe(
      '--price needs all four prices, and cache-read, cache-write are missing: input=3,output=15,cache-read=0.3,cache-write=3.75 (US$ per million tokens).',
    );
    expect(refusal(...RUN, '--price', 'input=3,output=15,cache-read=0.3,cache-write=3.75,input=4')).toContain('--price gives input twice');
    expect(refusal(...RUN, '--price', 'input=3,output=15,cache-read=0.3,cache_write=3.75')).toContain('"cache_write=3.75" is not one of those');
    expect(refusal(...RUN, '--price', 'input=$3,output=15,cache-read=0.3,cache-write=3.75')).toContain('"input=$3"');
    expect(refusal(...RUN, '--allow-request-change')).toBe('--allow-request-change only applies to --resume: it lets a resume go on with other request options. Add --resume, or drop --allow-request-change.');
    expect(refusal('demo', '--thinking', '4000')).toContain('add --model NAME (the scripted demo model takes none)');
  });
});

describe('a resume and the pinned request options', () => {
  const pinned = stored({ request: { thinking: { type: 'enabled', budget_tokens: 4_000 }, stopSequences: ['END'] }, price: PRICE });
  const given = (request: ClaudeArgs['request'], allowRequestChange = false, price?: typeof PRICE): ClaudeArgs => ({ request, price, allowRequestChange });

  it('a new run takes what it is given; a resume given nothing takes the run’s own, price included', () => {
    expect(modelSetupOf('m', given({ thinking: { type: 'adaptive' } }), null, undefined, ['read_file']).options).toEqual({ thinking: { type: 'adaptive' } });
    const resumed = modelSetupOf('m', undefined, pinned, undefined, ['read_file']);
    expect(resumed).toEqual({ options: { thinking: { type: 'enabled', budget_tokens: 4_000 }, stopSequences: ['END'], price: PRICE }, notes: [], resumeWords: [] });
    // The same values again are no change.
    expect(modelSetupOf('m', given({ thinking: { type: 'enabled', budget_tokens: 4_000 } }), pinned, undefined, null).notes).toEqual([]);
  });

  it('a resume given other values is refused with what differs and how to go on anyway', () => {
    let error: unknown;
    try {
      modelSetupOf('m', given({ thinking: { type: 'adaptive' }, serviceTier: 'auto' }), pinned, undefined, null);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RequestOptionsChangedError);
    expect(error).toMatchObject({ kind: 'refused', exitCode: 2, differences: ['--thinking: 4000 → adaptive', '--service-tier: none → auto'] });
    expect((error as Error).message).toBe(
      'The run in /work/here/.durable-agent was started with the request options --thinking 4000 --stop-sequences "END"; this resume changes ' +
        '--thinking: 4000 → adaptive; --service-tier: none → auto. It was not resumed and nothing was changed. Resume it without these options ' +
        '(the pinned ones apply) or with the same values; to change them anyway for this process, add --allow-request-change (the run keeps its pinned options for the resumes after it).',
    );
  });

  it('with --allow-request-change, goes on with the given ones for this process, says so, and its resume command asks the same way', () => {
    const setup = modelSetupOf('m', given({ thinking: null }, true, { ...PRICE, output: 10 }), pinned, undefined, null);
    expect(setup.options).toEqual({ stopSequences: ['END'], price: { ...PRICE, output: 10 } });
    expect(setup.notes).toEqual([
      '[resume] going on with --allow-request-change: --thinking: 4000 → off, for this process (the run keeps --thinking 4000 --stop-sequences "END")',
      '[resume] --price replaces the price the run was started with, for this process',
    ]);
    expect(setup.resumeWords).toEqual(['--thinking', 'off', '--stop-sequences', 'END', '--allow-request-change']);
  });

  it('refuses before anything is written what the API would refuse with this run’s max tokens and tools', () => {
    expect(() => modelSetupOf('m', undefined, pinned, 4_000, null)).toThrow(RequestOptionError);
    expect(() => modelSetupOf('m', given({ toolChoice: { type: 'tool', name: 'deploy' } }), null, undefined, ['read_file'])).toThrow('toolChoice names deploy, which the run does not offer (it offers read_file)');
    expect(() => modelSetupOf('m', given({ temperature: 0.2 }), null, undefined, null)).toThrow('--api-version 2023-06-01');
    expect(() => modelSetupOf('m', given({ temperature: 0.2, apiVersion: '2023-06-01' }), null, undefined, null)).not.toThrow();
  });

  it('pins only what changes the replies: never headers, betas, metadata, a key or a client', () => {
    expect(
      pinnedRequestOf({ thinking: { type: 'adaptive' }, metadata: { userId: 'u' }, ...({ headers: { a: 'b' }, betas: ['x'], apiKey: 'k' } as object) }),
    ).toEqual({ thinking: { type: 'adaptive' } });
    expect(pinnedRequestOf({ metadata: { userId: 'u' } })).toBeUndefined();
    expect(withGiven({ thinking: { type: 'adaptive' } }, { thinking: null })).toBeUndefined();
    expect(requestDifferences(undefined, { toolChoice: { type: 'tool', name: 'x' } })).toEqual(['--tool-choice: none → tool:x']);
    expect(requestWords({ apiVersion: '2023-06-01', temperature: 1 })).toBe('--api-version 2023-06-01 --temperature 1');
  });
});
