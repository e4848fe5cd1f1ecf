/**
 * The rule for a file that holds a secret, or what stands for one: it must be its owner's alone,
 * as ssh wants of a private key. One that others can read has already given the secret away, and
 * one they can write lets them choose it.
 */

/** Group and other permission bits: any of them set and the file is not its owner's alone. */
export const OPEN_TO_OTHERS = 0o077;

/** Whether a file's mode lets anyone but its owner read or change it. */
export function openToOthers(mode: number): boolean {
  return (mode & OPEN_TO_OTHERS) !== 0;
}
