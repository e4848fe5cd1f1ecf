/**
 * The lesson's words in each language: the same keys in every table (a key one language has and
 * another lacks fails here, by name), the language a locale names, and a run's language as the
 * API takes it: the model reads the unknown-state text in it, and one the lesson is not said in
 * is refused before anything is written.
 */
import { describe, expect, it } from 'vitest';
import { EN } from '../../src/lang/en.ts';
import { langOf, langOfLocale, LANGS, UnknownLangError, wordsOf } from '../../src/lang/lang.ts';
import { PT } from '../../src/lang/pt.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { MemoryStore } from '../../src/testing.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { toolResultOf } from '../helpers/messages.ts';

/** Each leaf of a table by its path, with what it is: a text, or a function of so many words. */
function leaves(table: unknown, at = ''): Map<string, string> {
  const found = new Map<string, string>();
  for (const [key, value] of Object.entries(table as Record<string, unknown>)) {
    const here = at === '' ? key : `${at}.${key}`;
    if (typeof value === 'function') found.set(here, `a function of ${value.length}`);
    else if (value !== null && typeof value === 'object') for (const [inner, kind] of leaves(value, here)) found.set(inner, kind);
    else found.set(here, typeof value);
  }
  return found;
}

/** What one table has that the other lacks or has otherwise, one line each (empty: the same keys). */
function keyProblems(tables: Readonly<Record<string, unknown>>): string[] {
  const byName = Object.entries(tables).map(([name, table]) => [name, leaves(table)] as const);
  const every = new Set(byName.flatMap(([, found]) => [...found.keys()]));
  const problems: string[] = [];
  for (const key of [...every].sort()) {
    const kinds = byName.map(([name, found]) => [name, found.get(key)] as const);
    const missing = kinds.filter(([, kind]) => kind === undefined).map(([name]) => name);
    if (missing.length > 0) problems.push(`${key} is missing from ${missing.join(', ')}`);
    else if (new Set(kinds.map(([, kind]) => kind)).size > 1) problems.push(`${key} differs: ${kinds.map(([name, kind]) => `${name} ${kind}`).join(', ')}`);
  }
  return problems;
}

describe('one table per language, the same keys in each', () => {
  it('has every key of every language in every other, each the same kind of thing', () => {
    expect(LANGS.map((lang) => wordsOf(lang))).toEqual([EN, PT]);
    expect(keyProblems({ en: EN, pt: PT })).toEqual([]);
    expect(leaves(EN).size).toBeGreaterThan(15);
  });

  it('names a key one table has and the other lacks, and one that is a text in one and a function in the other', () => {
    const { kill: _kill, ...withoutKill } = PT;
    expect(keyProblems({ en: EN, pt: withoutKill })).toEqual(['kill is missing from pt']);
    const extra = { ...PT, demo: { ...PT.demo, farewell: 'Tchau.' } };
    expect(keyProblems({ en: EN, pt: extra })).toEqual(['demo.farewell is missing from en']);
    const otherwise = { ...PT, unknownWhy: { ...PT.unknownWhy, noRecord: () => 'x' } };
    expect(keyProblems({ en: EN, pt: otherwise })).toEqual(['unknownWhy.noRecord differs: en string, pt a function of 0']);
  });

  it('says the lesson\'s lines in Portuguese as its Portuguese edition prints them', () => {
    expect(PT.resumed(3, ['write_report'])).toBe('[resume] li turn=3 pending=write_report');
    expect(PT.kill('after-effect-write:3')).toBe('[kill] kill simulado em after-effect-write:3');
    expect(PT.saveBAfterResume(3, 1)).toBe('[turn 3][save B] resultado da ferramenta deste turno preenchido após a retomada');
    expect(PT.reconcile.reused).toBe('acerto no livro-razão, reusando o resultado, sem reexecutar');
    expect(PT.reconcile['re-ran-read-only']).toBe('falha no livro-razão, ferramenta somente leitura, reexecutando');
    expect(PT.reconcile['unknown-reported']).toBe('falha no livro-razão com efeitos colaterais, indeterminável, anexando is_error');
    expect(PT.demo.done).toBe('Relatório escrito em report.txt, tarefa concluída.');
    expect(PT.unknownState('write_report', 'toolu_03', PT.unknownWhy.noRecord)).toBe(
      'O estado de execução desta chamada write_report antes da retomada é desconhecido: não há entrada no livro-razão e, para evitar um efeito colateral duplicado, ela não foi reexecutada. Verifique você mesmo se ela se completou.',
    );
  });
});

describe('the language a locale names', () => {
  it.each<[Record<string, string | undefined>, string]>([
    [{ LANG: 'pt_BR.UTF-8' }, 'pt'],
    [{ LANG: 'pt_PT' }, 'pt'],
    [{ LANG: 'pt' }, 'pt'],
    [{ LANG: 'pt_BR@currency=BRL' }, 'pt'],
    [{ LC_MESSAGES: 'pt_PT.UTF-8', LANG: 'en_US.UTF-8' }, 'pt'],
    [{ LC_ALL: 'pt_BR.UTF-8', LC_MESSAGES: 'en_GB', LANG: 'en_US' }, 'pt'],
    [{ LC_ALL: 'C', LANG: 'pt_BR.UTF-8' }, 'en'],
    [{ LC_ALL: '', LANG: 'pt_BR.UTF-8' }, 'pt'],
    [{ LANG: 'C.UTF-8' }, 'en'],
    [{ LANG: 'POSIX' }, 'en'],
    [{ LANG: 'fr_FR.UTF-8' }, 'en'],
    [{ LANG: 'en_US.UTF-8' }, 'en'],
    [{}, 'en'],
  ])('%j is %s', (env, lang) => {
    expect(langOfLocale(env)).toBe(lang);
  });
});

describe("a run's language, as a program gives it", () => {
  const sendEmail = () => {
    let sent = 0;
    const tool = defineTool({ name: 'send_email', description: 'Send.', inputSchema: { type: 'object' }, readOnly: false, run: async () => `sent ${++sent}` });
    return { tool, sent: () => sent };
  };
  const model = () => scriptedModel([toolUseReply([{ id: 'toolu_1', name: 'send_email', input: {} }]), endTurnReply('done')]);

  it('hands the model the unknown-state text in the language of the resume, whatever the start spoke', async () => {
    const email = sendEmail();
    const store = new MemoryStore('lang');
    await expect(startRun({ store, model: model(), tools: [email.tool], task: 'send it', crashAfter: 'after-tool-return:1' })).rejects.toThrow(SimulatedCrash);
    const result = await resumeRun({ store, model: model(), tools: [email.tool], lang: 'pt' });
    expect(result.status).toBe('done');
    const messages = foldJournal(store.location, await store.load()).context.messages;
    expect(toolResultOf(messages, 'toolu_1')).toMatchObject({
      is_error: true,
      content: PT.unknownState('send_email', 'toolu_1', 'não há entrada no livro-razão'),
    });
    expect(email.sent()).toBe(1);
  });

  it('refuses a language the lesson is not said in (UnknownLangError), before anything is written', async () => {
    const store = new MemoryStore('lang');
    const refused = startRun({ store, model: model(), tools: [sendEmail().tool], task: 'send it', lang: 'fr' as never });
    await expect(refused).rejects.toThrow(UnknownLangError);
    await expect(refused).rejects.toMatchObject({ name: 'UnknownLangError', lang: 'fr', kind: 'refused' });
    expect(await store.exists()).toBe(false);
    expect(langOf(undefined)).toBe('en');
    expect(() => langOf('pt_BR')).toThrow('lang must be one of en, pt (got "pt_BR"); nothing was started.');
  });
});
