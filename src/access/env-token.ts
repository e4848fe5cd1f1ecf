/**
 * The simplest TokenCheck: one token from the environment (DURABLE_AGENT_API_TOKEN=NAME:SECRET),
 * which reads and steers the runs of every tenant, and whose name is who the journal records as
 * deciding. Compared in constant time, so that the time of a refusal says nothing of the secret.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
import type { Caller, TokenCheck } from './caller.ts';

export const API_TOKEN_ENV = 'DURABLE_AGENT_API_TOKEN';

/** The token is not NAME:SECRET with a secret long enough to be one. */
export class ApiTokenFormatError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ApiTokenFormatError';
  constructor(readonly variable: string) {
    super(
      `${variable} is not NAME:SECRET with a secret of at least ${MIN_SECRET} characters: set it to, for example, ` +
        `ana:$(openssl rand -base64 24). NAME is who the journal records as deciding. Nothing was started.`,
    );
  }
}

const MIN_SECRET = 16;

export class EnvTokenCheck implements TokenCheck {
  private readonly digest: Buffer;
  private readonly caller: Caller;

  constructor(
    /** NAME:SECRET. */
    readonly token: string,
    variable = API_TOKEN_ENV,
  ) {
    const colon = token.indexOf(':');
    if (colon < 1 || token.length - colon - 1 < MIN_SECRET) throw new ApiTokenFormatError(variable);
    this.caller = { name: token.slice(0, colon), role: 'steer', tenant: null };
    this.digest = digestOf(token);
  }

  callerOf(authorization: string | undefined): Caller | null {
    const given = /^Bearer ([^\s]+)$/.exec(authorization ?? '')?.[1];
    if (given === undefined) return null;
    // Digests of one length: timingSafeEqual then compares without a shortcut on the length either.
    return timingSafeEqual(digestOf(given), this.digest) ? { ...this.caller } : null;
  }
}

function digestOf(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
