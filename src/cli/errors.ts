/** Refusals of the command line that are not about the words typed but about what they name. */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** A directory to read from does not exist: refused rather than created empty. */
export class NoSuchDirectoryError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'NoSuchDirectoryError';
  constructor(
    readonly option: string,
    readonly dir: string,
    /** Something else is there (a file). */
    readonly exists: boolean,
  ) {
    super(
      `${option} ${dir}: ${exists ? 'not a directory' : 'no such directory'}. ` +
        'Give the directory the run was started in (the --dir of demo or run); nothing was written.',
    );
  }
}

/**
 * A secret given as a word of the command line: every user of the machine reads those (ps,
 * /proc/PID/cmdline), so the flag is refused before anything starts.
 */
export class SecretOnCommandLineError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'SecretOnCommandLineError';
  constructor(
    /** The flag, with its dashes. */
    readonly flag: string,
    /** Where to give the secret instead. */
    readonly instead: string,
  ) {
    super(`${flag} would put a secret on the command line, where every user of this machine can read it (ps). Nothing was started: ${instead}`);
  }
}

/** Why a file meant to hold a secret is refused. */
export type SecretFileProblem = 'missing' | 'not-a-file' | 'open-to-others' | 'empty';

/** A file meant to hold a secret (--token-file) that cannot be taken: missing, not a file, readable by others, empty. */
export class SecretFileError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'SecretFileError';
  constructor(
    readonly option: string,
    readonly file: string,
    readonly problem: SecretFileProblem,
    /** The file's permission bits, where it is a file. */
    readonly mode: number | null = null,
  ) {
    super(`${option} ${file}: ${SECRET_FILE_PROBLEMS[problem](file, mode)} Nothing was started.`);
  }
}

const SECRET_FILE_PROBLEMS: Record<SecretFileProblem, (file: string, mode: number | null) => string> = {
  missing: () => 'no such file. Give the file that holds the secret.',
  'not-a-file': () => 'not a regular file. Give the file that holds the secret.',
  'open-to-others': (file, mode) =>
    `other users of this machine can read or change it (mode ${(mode ?? 0).toString(8).padStart(4, '0')}), and it holds a secret. Make it yours alone (chmod 600 ${file}), then run the command again.`,
  empty: (file) => `${file} holds no token. Write the token in it (NAME:SECRET names who uses it).`,
};

/**
 * `run --agents` named a run of the folder that no agent started (demo, run with the file tools,
 * a program without defineAgent): driving it with the agent's tools would be another run's work.
 */
export class RunWithoutAgentError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'RunWithoutAgentError';
  constructor(
    readonly location: string,
    /** The command that started it, as its journal says ('demo', 'run', 'api'…). */
    readonly startedBy: string,
    readonly agent: string,
  ) {
    super(
      `The run in ${location} was started by ${startedBy === 'api' ? 'a program' : `\`durable-agent ${startedBy}\``} without an agent, not by the agent ${agent}. ` +
        'Nothing was run. Give the agent its own run id (--run ID, or none for a new one), or go on with that run the way it was started.',
    );
  }
}

/** A run an agent started, named without its agent (`run --resume` with the file tools): it goes on only with that agent. */
export class RunNeedsAgentError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'RunNeedsAgentError';
  constructor(
    readonly location: string,
    readonly agent: string,
    /** The command that takes it up, when its journal names the module the agent came from. */
    readonly resumeCommand: string | null,
  ) {
    super(
      `The run in ${location} was started with the agent ${agent}: it goes on only with that agent, loaded from its module. Nothing was run. ` +
        (resumeCommand ? `Resume it with: ${resumeCommand}` : `Resume it with --agents and the module that exports ${agent}, and --agent ${agent}.`),
    );
  }
}
