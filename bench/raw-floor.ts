/**
 * The raw floor: what the disk alone charges for our store's durability. The same bytes as a
 * journal our store wrote, appended with the same number of fsync/fdatasync calls, and no
 * logic at all (the chunks are cut beforehand). Our store's cost per turn is compared with it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { JOURNAL_FILE } from '../src/store/file-store.ts';

/**
 * A journal's bytes in the pieces our store wrote them: header, commit mark and first record
 * (written together when the run is created), then one piece per appended record.
 */
export function journalChunks(storeDir: string): Buffer[] {
  const bytes = fs.readFileSync(path.join(storeDir, JOURNAL_FILE));
  const chunks: Buffer[] = [];
  let start = 0;
  let lines = 0;
  for (let end = bytes.indexOf(0x0a); end !== -1; end = bytes.indexOf(0x0a, end + 1)) {
    lines += 1;
    // Lines 1-3 (header, commit mark, record 0) make up the first write.
    if (lines < 3) continue;
    chunks.push(bytes.subarray(start, end + 1));
    start = end + 1;
  }
  return chunks;
}

/**
 * Writes the chunks to a new file in `dir`: the first one fsynced with the directory (a new
 * file must have its name made durable too, as our store's create does), then each further
 * chunk appended and fdatasynced.
 */
export function appendWithSyncs(dir: string, chunks: readonly Buffer[]): void {
  fs.mkdirSync(dir, { recursive: true });
  const fd = fs.openSync(path.join(dir, 'floor.jsonl'), 'w');
  try {
    let end = 0;
    chunks.forEach((chunk, index) => {
      for (let done = 0; done < chunk.length; ) done += fs.writeSync(fd, chunk, done, chunk.length - done, end + done);
      end += chunk.length;
      if (index > 0) return fs.fdatasyncSync(fd);
      fs.fsyncSync(fd);
      const dirFd = fs.openSync(dir, 'r');
      fs.fsyncSync(dirFd);
      fs.closeSync(dirFd);
    });
  } finally {
    fs.closeSync(fd);
  }
}
