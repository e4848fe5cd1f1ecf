/** Where a run keeps its state inside DIR: the store's name for it, the one a program's FileRuns(DIR) uses too. */
export { STATE_DIR } from '../store/open-store.ts';
