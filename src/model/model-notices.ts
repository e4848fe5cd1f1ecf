/**
 * What the Anthropic SDK says about a model on every request it makes: that the model is
 * deprecated, or that its manual thinking mode is. The SDK prints it with console.warn from
 * inside messages.create(), once per request, so a long run would print it hundreds of times
 * among its own lines. The adapter says it once instead, through the run's own output (a
 * model-notice event), and holds back exactly the SDK's copy.
 *
 * The SDK's table (internal/data/deprecated-models.js) is not reachable through any path its
 * package exports, so the facts are kept here, from @anthropic-ai/sdk 1.14.0: update them with
 * the SDK. A warning the SDK gives for a model this table does not know yet is passed on in the
 * SDK's words, once, rather than lost.
 */

/** End of life of the deprecated models, as the SDK lists them. */
export const DEPRECATED_MODELS: Readonly<Record<string, string>> = {
  'claude-mythos-preview': '2026-06-30',
  'claude-opus-4-5': '2027-01-22',
  'claude-opus-4-5-20251101': '2027-01-22',
  'claude-sonnet-4-5': '2026-11-30',
  'claude-sonnet-4-5-20250929': '2026-11-30',
};

/** Models for which the SDK calls `thinking: { type: 'enabled' }` deprecated in favour of adaptive. */
export const ADAPTIVE_THINKING_MODELS: readonly string[] = ['claude-opus-4-6', 'claude-mythos-preview'];

const DEPRECATIONS_PAGE = 'https://docs.anthropic.com/en/docs/resources/model-deprecations';

/** What to tell a user about requests to this model with this thinking, in our words. */
export function modelNotices(model: string, thinkingType?: string): string[] {
  const notices: string[] = [];
  const endOfLife = DEPRECATED_MODELS[model];
  if (endOfLife) notices.push(`${model} is deprecated and reaches end of life on ${endOfLife}: move the run's agent to a newer model (${DEPRECATIONS_PAGE}).`);
  if (thinkingType === 'enabled' && ADAPTIVE_THINKING_MODELS.includes(model)) {
    notices.push(`thinking with a fixed budget is deprecated for ${model}: --thinking adaptive ({ type: 'adaptive' }) is the mode to use.`);
  }
  return notices;
}

/** The SDK's two warnings, as resources/messages/messages.js words them. */
const SDK_DEPRECATED_MODEL = /^The model '[^']+' is deprecated and will reach end-of-life on /;
const SDK_ENABLED_THINKING = /^Using Claude with \S+ and 'thinking\.type=enabled' is deprecated\./;

/** Whether a console.warn message is one of the SDK's model warnings. */
export function isSdkModelWarning(message: unknown): message is string {
  return typeof message === 'string' && (SDK_DEPRECATED_MODEL.test(message) || SDK_ENABLED_THINKING.test(message));
}

/**
 * Runs `call` with the SDK's model warnings held back and handed to `held` instead. The SDK
 * warns synchronously, at the top of create() (stream() calls it before its first await too),
 * so console.warn is replaced only for the synchronous part of the call: no other code runs in
 * between, and every other warning, even one printed then, goes through untouched.
 */
export function withSdkWarningsHeld<T>(call: () => T, held: (message: string) => void): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (args.length === 1 && isSdkModelWarning(args[0])) held(args[0]);
    else warn.apply(console, args);
  };
  try {
    return call();
  } finally {
    console.warn = warn;
  }
}

/** The notice for a warning the SDK held back: ours when the table covers it, else the SDK's own first line. */
export function noticeOfSdkWarning(message: string, ours: readonly string[]): string | null {
  const covered = SDK_DEPRECATED_MODEL.test(message) ? ours.some((notice) => notice.includes('end of life')) : ours.some((notice) => notice.includes('adaptive'));
  return covered ? null : message.split('\n')[0]!.trim();
}
