import { Miniflare } from 'miniflare';
import { bundleWorker } from '../support/workerd-bundle.js';

/** The date workerd's behaviour is pinned to (no compatibility flags: no `nodejs_compat`). */
const COMPATIBILITY_DATE = '2026-01-01';

/** Bundles `entry` (next to this file; the host with `@churn-risk/core` from source and Hono). */
export async function bundleHost(entry = 'worker.ts'): Promise<string> {
  return (await bundleWorker(new URL(entry, import.meta.url))).code;
}

/** workerd (through miniflare) serving a module worker on 127.0.0.1. */
export interface WorkerdServer {
  baseUrl: string;
  /** Disposes miniflare, which ends its workerd process. */
  close(): Promise<void>;
}

/** Starts workerd with `script` as the only module worker, on a free port of 127.0.0.1. */
export async function startWorkerd(script: string): Promise<WorkerdServer> {
  const miniflare = new Miniflare({
    modules: true,
    script,
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: [],
    host: '127.0.0.1',
    port: 0,
  });
  try {
    const url = await miniflare.ready;
    return {
      baseUrl: url.origin,
      close: () => miniflare.dispose(),
    };
  } catch (error) {
    await miniflare.dispose();
    throw error;
  }
}
