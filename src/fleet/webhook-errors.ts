/** The refusal of webhook settings, apart so that durable-agent/errors loads no pg. */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

export const MIN_SECRET_LENGTH = 16;

export class WebhookSettingsError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'WebhookSettingsError';
  constructor(readonly problem: string) {
    super(`The webhook cannot be used: ${problem}. Nothing was started; give a webhook URL (http or https) and a secret of ${MIN_SECRET_LENGTH} characters at least.`);
  }
}

