import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { fileURLToPath } from 'node:url';

/** The date workerd's behaviour is pinned to (no compatibility flags: no `nodejs_compat`). */
const COMPATIBILITY_DATE = '2026-01-01';

/**
 * Bundles `worker.ts` (the host, `@churn-risk/core` from source, Hono) into one ES module the way
 * a Workers build does: export conditions `workerd`, `worker`, `browser`, and a neutral platform,
 * so any import of a Node built-in fails the build instead of relying on `nodejs_compat`.
 */
export async function bundleWorker(entry = 'worker.ts'): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL(entry, import.meta.url))],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['@churn-risk/source', 'workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (output === undefined) throw new Error('esbuild produced no worker bundle');
  return output.text;
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
