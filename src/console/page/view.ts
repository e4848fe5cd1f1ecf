/** What a view of the page (the list, a run) is given, and how it is stopped when the page shows another. */
import type { ConsoleApi } from './api.ts';

export interface ViewContext {
  /** The element the view fills. */
  main: HTMLElement;
  api: ConsoleApi;
  /** Shows the view the address names now (after the view changed the address). */
  route(): void;
}

/** Stops what a view keeps doing (its timers, its live stream). */
export type StopView = () => void;
