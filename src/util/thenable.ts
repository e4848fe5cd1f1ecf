/** Whether a value is a promise or any thenable, to be waited for as `await` would wait for it. */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null | undefined)?.then === 'function';
}
