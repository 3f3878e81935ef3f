import type { DemoBackend } from '@churn-risk/example-durable-demo';
import { fileURLToPath } from 'node:url';
import { processNode } from './node-binary.js';
import { startPostgres } from './start-postgres.js';

/** How often the demo's worker puts a dead worker's alerts back (`RECLAIM_MS`). */
const RECLAIM_MS = 1000;

/**
 * The demo on Postgres: a throwaway PostgreSQL cluster, `DATABASE_URL`, the web and worker
 * processes, a lease that expires and a reclaim that puts the alert back.
 */
export const postgresBackend: DemoBackend = {
  id: 'postgres',
  title: 'PostgreSQL',
  exampleRoot: fileURLToPath(new URL('../..', import.meta.url)),
  urlVariable: 'DATABASE_URL',
  node: processNode,
  workerEnv: { RECLAIM_MS: String(RECLAIM_MS) },
  accepted: 'every one of them committed in Postgres',
  takeover: (lockMs) =>
    `it takes the dead worker's alerts over once their lease expires (${lockMs} ms) at its next ` +
    `reclaim (every ${RECLAIM_MS} ms)`,
  async startServer() {
    const postgres = await startPostgres();
    return {
      url: postgres.url,
      description: `PostgreSQL 15 (pid ${postgres.pid}) on ${postgres.url}`,
      async stop() {
        try {
          await postgres.stop();
        } finally {
          postgres.cleanup();
        }
      },
      kill() {
        if (postgres.pid > 0) {
          try {
            process.kill(postgres.pid, 'SIGKILL'); // the postmaster; its backends exit with it
          } catch {
            // already gone
          }
        }
        postgres.cleanup();
      },
    };
  },
};
