// dynalite ships no types: the part the emulators use.
declare module 'dynalite' {
  import type { Server } from 'node:http';

  interface DynaliteOptions {
    /** Milliseconds a table takes to become ACTIVE (and to be deleted or updated). */
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    /** A LevelDB directory; without it the tables live in memory. */
    path?: string;
  }

  /** A DynamoDB-compatible HTTP server, not yet listening. */
  export default function dynalite(options?: DynaliteOptions): Server;
}
