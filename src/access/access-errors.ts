/** What the tokens file and its commands refuse: a file others can reach, a file that is not one, a name taken or unknown. */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

export type TokensFileProblem = 'missing' | 'not-a-file' | 'open-to-others' | 'damaged';

/** A tokens file that cannot be taken: missing, not a file, readable or writable by others, not a tokens file. */
export class TokensFileError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'TokensFileError';
  constructor(
    readonly file: string,
    readonly problem: TokensFileProblem,
    /** The file's permission bits, where it is a file. */
    readonly mode: number | null = null,
    /** What is wrong inside it, for a damaged file. */
    readonly detail: string | null = null,
  ) {
    super(`--tokens-file ${file}: ${TOKENS_FILE_PROBLEMS[problem](file, mode, detail)} Nothing was changed.`);
  }
}

const TOKENS_FILE_PROBLEMS: Record<TokensFileProblem, (file: string, mode: number | null, detail: string | null) => string> = {
  missing: () => 'no such file. Give the tokens file, or make it with durable-agent token add NAME --role read|steer --tokens-file FILE.',
  'not-a-file': () => 'not a regular file. Give the tokens file.',
  'open-to-others': (file, mode) =>
    `other users of this machine can read or change it (mode ${(mode ?? 0).toString(8).padStart(4, '0')}), and it says who may see and steer runs. Make it yours alone (chmod 600 ${file}), then run the command again.`,
  damaged: (_file, _mode, detail) => `not a tokens file as durable-agent token writes it (${detail}). Put the file back from where it was kept, or make a new one with durable-agent token add.`,
};

/** A tokens file another `token add` or `token remove` is changing, for longer than a change takes. */
export class TokensFileBusyError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'TokensFileBusyError';
  constructor(
    readonly file: string,
    readonly lock: string,
    /** The pid its lock names (0: a lock that does not name one). */
    readonly holder: number,
  ) {
    super(
      `${file} is being changed by ${holder ? `process ${holder}` : 'another process'} (its lock ${lock} has held it for 10 s). ` +
        `Run the command again once that one has finished; if no such process is running, delete ${lock}. Nothing was changed.`,
    );
  }
}

/** A token's name that cannot be one. */
export class TokenNameError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'TokenNameError';
  constructor(readonly tokenName: string) {
    super(`${JSON.stringify(tokenName)} cannot name a token: give 1 to 64 letters, digits, ".", "_", "@" or "-", beginning with a letter or digit. Nothing was changed.`);
  }
}

/** token add NAME where the file already has a token of that name. */
export class TokenNameTakenError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'TokenNameTakenError';
  constructor(
    readonly tokenName: string,
    readonly file: string,
  ) {
    super(`${file} already has a token named ${tokenName}: give another name, or remove it first (durable-agent token remove ${tokenName} --tokens-file ${file}). Nothing was changed.`);
  }
}

/** token remove NAME where the file has no token of that name. */
export class TokenNotFoundError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'TokenNotFoundError';
  constructor(
    readonly tokenName: string,
    readonly file: string,
  ) {
    super(`${file} has no token named ${tokenName}: durable-agent token list --tokens-file ${file} shows their names. Nothing was changed.`);
  }
}

/** An environment's token is not NAME:SECRET with a secret long enough to be one. */
export class ApiTokenFormatError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ApiTokenFormatError';
  constructor(
    readonly variable: string,
    readonly minSecret: number,
  ) {
    super(
      `${variable} is not NAME:SECRET with a secret of at least ${minSecret} characters: set it to, for example, ` +
        `ana:$(openssl rand -base64 24). NAME is who the journal records as deciding. Nothing was started.`,
    );
  }
}
