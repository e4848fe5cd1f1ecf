/**
 * A fresh idempotency key for a start that names none: with it, a start retried after a lost
 * answer finds the run the first try started instead of starting a second.
 */
export function newIdempotencyKey(): string {
  const bytes = new Uint8Array(16);
  // getRandomValues is in every browser (insecure pages too, unlike randomUUID) and in Node 20.
  if (globalThis.crypto?.getRandomValues) globalThis.crypto.getRandomValues(bytes);
  else for (let i = 0; i < bytes.length; i += 1) bytes[i] = Math.floor(Math.random() * 256);
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}
