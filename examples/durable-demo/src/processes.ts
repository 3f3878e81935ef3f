import { join } from 'node:path';
import { startChild, type Child, type ChildOptions } from './child-process.js';

/** How the demo runs its worker: small enough to see it crash mid-alert. */
export const WORKER_SETTINGS = { concurrency: 4, workMs: 80, lockMs: 3000 };

/** What every process of the demo shares. */
export interface ProcessEnv {
  /** Where the example's processes run, and on which Node. */
  run: ChildOptions;
  /** Variables both processes get: the queue's URL and the webhook secret. */
  common: Record<string, string>;
  /** The back end's worker variables besides `WORKER_SETTINGS`. */
  workerEnv: Record<string, string>;
  /** Folder of the worker's store file. */
  dir: string;
  /** Called with each process as soon as it is spawned (so that it is stopped on the way out). */
  track: (child: Child) => Child;
}

/** The worker's idempotent store: one JSON line per handled alert. */
export function storeFile(env: ProcessEnv): string {
  return join(env.dir, 'follow-up-tasks.jsonl');
}

/**
 * Starts `src/web.ts` on a free port; resolves with the process, its webhook URL and the URL of
 * its failed alerts' page when it serves one (it prints `ops page on <url>` before `listening on`).
 */
export async function startWeb(
  name: string,
  env: ProcessEnv,
): Promise<{ child: Child; webhook: string; ops: string | undefined }> {
  // The demo's page is open (no OPS_PASSWORD), which createOpsHandler takes only while NODE_ENV
  // is development or test: development, unless the demo runs under one already.
  const mode = process.env.NODE_ENV === undefined ? { NODE_ENV: 'development' } : {};
  const child = env.track(
    startChild(name, 'src/web.ts', { ...mode, ...env.common, PORT: '0' }, env.run),
  );
  const line = await child.waitForLine(/^listening on /);
  const ops = child.lines.find((candidate) => candidate.startsWith('ops page on '));
  return {
    child,
    webhook: `${line.slice('listening on '.length)}/webhooks/churn-risk`,
    ops: ops?.slice('ops page on '.length),
  };
}

/** Starts `src/worker.ts`; resolves once it is ready. */
export async function startWorker(name: string, env: ProcessEnv): Promise<Child> {
  const child = env.track(
    startChild(
      name,
      'src/worker.ts',
      {
        ...env.common,
        STORE_FILE: storeFile(env),
        CONCURRENCY: String(WORKER_SETTINGS.concurrency),
        WORK_MS: String(WORKER_SETTINGS.workMs),
        LOCK_MS: String(WORKER_SETTINGS.lockMs),
        ...env.workerEnv,
      },
      env.run,
    ),
  );
  await child.waitForLine(/^worker ready/);
  return child;
}
