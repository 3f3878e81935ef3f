import { existsSync, readFileSync, truncateSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';

/** One line of the store: the side effect of one alert, keyed by its identity. */
export interface StoredRecord {
  /** The alert identity `userId:triggeredAt` (`context.id`): the idempotency key. */
  id: string;
  [field: string]: unknown;
}

/**
 * An append-only JSON-lines file of records keyed by alert identity: the side effect of the
 * worker's handler, written at most once per identity. A handler run again after a worker crash
 * finds its record and does nothing twice.
 *
 * One file serves one worker host. Several workers on several hosts need a store they share, with
 * the identity as a unique key: a database `UNIQUE` column (`INSERT ... ON CONFLICT DO NOTHING`),
 * Redis `SET key 1 NX`, or an `Idempotency-Key` on the API the handler calls.
 */
export interface IdempotentStore {
  /** Whether a record with this identity exists. */
  has(id: string): boolean;
  /**
   * Appends the record unless one with its id exists. Resolves `true` when it was written now
   * (after the line reached the file), `false` when it was already there.
   */
  addOnce(record: StoredRecord): Promise<boolean>;
}

/**
 * The file's complete lines: those ended by a newline. A line without one is being written by
 * another process right now, or was torn by a crash mid-write (its handler did not finish, so its
 * retry writes the record again).
 */
function completeText(file: string): { text: string; bytes: number; size: number } {
  if (!existsSync(file)) return { text: '', bytes: 0, size: 0 };
  const data = readFileSync(file);
  const bytes = data.lastIndexOf(0x0a) + 1;
  return { text: data.subarray(0, bytes).toString('utf8'), bytes, size: data.length };
}

/** Every complete record in the file, in the order written (none when the file does not exist). */
export function readRecords(file: string): StoredRecord[] {
  return completeText(file)
    .text.split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as StoredRecord);
}

/** Opens the store (one process at a time), loading the identities already in the file. */
export function openIdempotentStore(file: string): IdempotentStore {
  // A torn last line (a crash mid-write) is cut off, so that the next record starts a line.
  const { bytes, size } = completeText(file);
  if (bytes < size) truncateSync(file, bytes);
  const ids = new Set(readRecords(file).map((record) => record.id));
  return {
    has: (id) => ids.has(id),
    async addOnce(record) {
      if (ids.has(record.id)) return false;
      ids.add(record.id); // claimed before the write: a concurrent run of the same id stops here
      try {
        // One small write with O_APPEND: the line lands whole after the others (a reader may see
        // it half-written: readRecords leaves out an unfinished last line).
        await appendFile(file, `${JSON.stringify(record)}\n`);
      } catch (error) {
        ids.delete(record.id); // not written: the handler fails and its retry writes it
        throw error;
      }
      return true;
    },
  };
}
