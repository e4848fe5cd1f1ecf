/**
 * The console's watches on run folders (fs.watch: one inotify watch a folder on Linux). A folder
 * that cannot be watched, because the system's limit of watches is reached, is not an error: the
 * index reads it again at every answer instead, and the console says so once.
 */
import fs from 'node:fs';

export type WatchListener = (event: string, name: string | null) => void;
/** fs.watch on one folder, not recursive; a test gives one that runs out of watches. */
export type WatchFolder = (dir: string, listener: WatchListener) => fs.FSWatcher;

export const watchFolder: WatchFolder = (dir, listener) =>
  // Not persistent: the watches never keep the process alive once its server is closed.
  fs.watch(dir, { persistent: false }, (event, name) => listener(event, name == null ? null : String(name)));

/** Why a folder has no watch: it is not there (any more), or there are no watches left. */
export type NoWatch = 'gone' | 'limit';

export class FolderWatches {
  private limitSaid = false;

  constructor(
    private readonly watch: WatchFolder,
    /** A line for the console's output. */
    private readonly notice: (line: string) => void,
  ) {}

  /**
   * A watch on the folder, or why there is none. `onLost`: the watch broke after it was made (its
   * 'error' event): the folder is then read at every answer, as one that could not be watched.
   */
  open(dir: string, listener: WatchListener, onLost: () => void): fs.FSWatcher | NoWatch {
    let watcher: fs.FSWatcher;
    try {
      watcher = this.watch(dir, listener);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return 'gone';
      this.sayLimit(code ?? (error as Error).message);
      return 'limit';
    }
    watcher.on('error', () => {
      watcher.close();
      onLost();
    });
    return watcher;
  }

  private sayLimit(code: string): void {
    if (this.limitSaid) return;
    this.limitSaid = true;
    this.notice(
      code === 'ENOSPC'
        ? '[console] the system\'s limit of file watches is reached (fs.inotify.max_user_watches): the runs past it are read again at every answer of the list (a few stats each), not only when they change. Raise it (sysctl fs.inotify.max_user_watches=524288) and restart the console to watch them all.'
        : `[console] a run folder cannot be watched (${code}): the runs it cannot watch are read again at every answer of the list (a few stats each), not only when they change.`,
    );
  }
}
