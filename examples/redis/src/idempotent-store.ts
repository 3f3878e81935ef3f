import { existsSync, readFileSync } from 'node:fs';
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

/** Every record in the file, in the order written (none when the file does not exist). */
export function readRecords(file: string): StoredRecord[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as StoredRecord);
}

/** Opens the store, loading the identities already in the file. */
export function openIdempotentStore(file: string): IdempotentStore {
  const ids = new Set(readRecords(file).map((record) => record.id));
  return {
    has: (id) => ids.has(id),
    async addOnce(record) {
      if (ids.has(record.id)) return false;
      ids.add(record.id); // claimed before the write: a concurrent run of the same id stops here
      try {
        // One small write with O_APPEND: the line lands whole or not at all.
        await appendFile(file, `${JSON.stringify(record)}\n`);
      } catch (error) {
        ids.delete(record.id); // not written: the handler fails and its retry writes it
        throw error;
      }
      return true;
    },
  };
}
