/**
 * The languages the lesson is said in, and which one a process speaks: the one it is given, else
 * the one its locale names (POSIX: the first set of LC_ALL, LC_MESSAGES, LANG), else English.
 */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
import { EN } from './en.ts';
import type { LessonWords } from './lesson-words.ts';
import { PT } from './pt.ts';

export const LANGS = ['en', 'pt'] as const;

export type Lang = (typeof LANGS)[number];

const WORDS: Readonly<Record<Lang, LessonWords>> = { en: EN, pt: PT };

/** The variables that name the language of messages, the one that wins first. */
export const LOCALE_VARIABLES = ['LC_ALL', 'LC_MESSAGES', 'LANG'] as const;

export function isLang(value: unknown): value is Lang {
  return typeof value === 'string' && (LANGS as readonly string[]).includes(value);
}

/** A program gave a language the lesson is not said in; nothing was started. */
export class UnknownLangError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'UnknownLangError';
  constructor(readonly lang: unknown) {
    super(`lang must be one of ${LANGS.join(', ')} (got ${JSON.stringify(lang) ?? String(lang)}); nothing was started. Leave it out for English.`);
  }
}

/** A run's language as a program gives it: absent is English; one the lesson is not said in is refused. */
export function langOf(value: unknown): Lang {
  if (value === undefined) return 'en';
  if (!isLang(value)) throw new UnknownLangError(value);
  return value;
}

/** The table of a language. */
export function wordsOf(lang: Lang | undefined): LessonWords {
  return WORDS[lang ?? 'en'];
}

/**
 * The language the locale names: `pt_BR.UTF-8`, `pt_PT` and `pt` are Portuguese; C, POSIX, a
 * language the lesson is not said in, or no locale at all, English. The first variable set
 * decides, as for any program's messages: LC_ALL=C over LANG=pt_BR.UTF-8 is English.
 */
export function langOfLocale(env: Readonly<Record<string, string | undefined>>): Lang {
  const locale = LOCALE_VARIABLES.map((name) => env[name]).find((value) => value !== undefined && value !== '');
  const language = locale?.split(/[_.@-]/, 1)[0]?.toLowerCase();
  return isLang(language) ? language : 'en';
}
