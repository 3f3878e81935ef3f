import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare, type WorkerOptions } from 'miniflare';

// Test support: the example worker, bundled as wrangler bundles it (export conditions `workerd`,
// `worker`, `browser`), run in workerd through miniflare with wrangler.toml's settings: its
// compatibility date and flags (no nodejs_compat), its Queues (producer, consumer, dead-letter
// queue and their settings), its D1 database and its KV namespace. A second worker with the same
// code and bindings (no consumer) is another isolate on the same Queue and D1.

export const WRANGLER_TOML = readFileSync(new URL('../wrangler.toml', import.meta.url), 'utf8');

/** The settings lines of wrangler.toml (comments dropped). */
const SETTINGS = WRANGLER_TOML.split('\n')
  .filter((line) => !line.trimStart().startsWith('#'))
  .join('\n');

function setting(pattern: RegExp, what: string): string {
  const value = pattern.exec(SETTINGS)?.[1];
  if (value === undefined) throw new Error(`wrangler.toml has no ${what}`);
  return value;
}

/** What the tests read from wrangler.toml. */
export function wranglerSettings(): {
  date: string;
  flags: string[];
  producer: { binding: string; queue: string };
  consumer: { queue: string; maxBatchSize: number; maxBatchTimeout: number; maxRetries: number };
  deadLetterQueue: string;
  d1: string;
} {
  const flags = /^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(SETTINGS)?.[1] ?? '';
  const producer = setting(/\[\[queues\.producers\]\]([^[]*)/, 'queue producer');
  const consumers = [...SETTINGS.matchAll(/\[\[queues\.consumers\]\]([^[]*)/g)].map((m) => m[1]);
  const main = consumers.find((c) => c?.includes('dead_letter_queue')) ?? '';
  const field = (section: string, name: string): string =>
    setting(new RegExp(`^${name}\\s*=\\s*"?([^"\\n]+)"?`, 'm'), `${name} in ${section.trim()}`);
  const onMain = (name: string): string =>
    new RegExp(`^${name}\\s*=\\s*"?([^"\\n]+)"?`, 'm').exec(main)?.[1] ?? '';
  const deadLetterQueue = onMain('dead_letter_queue');
  if (!consumers.some((c) => c?.includes(`queue = "${deadLetterQueue}"`))) {
    throw new Error('wrangler.toml has no consumer of the dead-letter queue');
  }
  return {
    date: setting(/^compatibility_date\s*=\s*"([^"]+)"/m, 'compatibility_date'),
    flags: [...flags.matchAll(/"([^"]+)"/g)].map((m) => m[1] as string),
    producer: {
      binding: /binding\s*=\s*"([^"]+)"/.exec(producer)?.[1] ?? field('producer', 'binding'),
      queue: /queue\s*=\s*"([^"]+)"/.exec(producer)?.[1] ?? field('producer', 'queue'),
    },
    consumer: {
      queue: onMain('queue'),
      maxBatchSize: Number(onMain('max_batch_size')),
      maxBatchTimeout: Number(onMain('max_batch_timeout')),
      maxRetries: Number(onMain('max_retries')),
    },
    deadLetterQueue,
    d1: setting(/\[\[d1_databases\]\][^[]*?binding\s*=\s*"([^"]+)"/, 'D1 database'),
  };
}

/** The example worker as one ES module. */
export async function bundleExample(): Promise<string> {
  const bundle = await build({
    entryPoints: [fileURLToPath(new URL('../src/worker.ts', import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['@churn-risk/source', 'workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    write: false,
    logLevel: 'silent',
  });
  return bundle.outputFiles[0]?.text ?? '';
}

export const FIRST = 'churn-risk-webhooks';
export const SECOND = 'churn-risk-webhooks-other-isolate';

/** Starts the example in workerd on a 127.0.0.1 port: two workers (isolates), one consumer. */
export async function startExample(
  script: string,
  vars: { secret: string; crm: string; ops: string },
): Promise<{ mf: Miniflare; url: URL }> {
  const s = wranglerSettings();
  const worker = (name: string): WorkerOptions => ({
    name,
    modules: true,
    script,
    compatibilityDate: s.date,
    compatibilityFlags: s.flags,
    bindings: {
      CHURN_RISK_WEBHOOK_SECRET: vars.secret,
      CRM_WEBHOOK_URL: vars.crm,
      OPS_WEBHOOK_URL: vars.ops,
    },
    kvNamespaces: { ALERTS: 'alerts' },
    d1Databases: { [s.d1]: 'churn-risk' },
    queueProducers: { [s.producer.binding]: { queueName: s.producer.queue } },
  });
  const settings = {
    maxBatchSize: s.consumer.maxBatchSize,
    maxBatchTimeout: s.consumer.maxBatchTimeout,
  };
  const mf = new Miniflare({
    host: '127.0.0.1',
    port: 0,
    workers: [
      {
        ...worker(FIRST),
        queueConsumers: {
          [s.consumer.queue]: {
            ...settings,
            maxRetries: s.consumer.maxRetries,
            deadLetterQueue: s.deadLetterQueue,
          },
          [s.deadLetterQueue]: settings,
        },
      },
      worker(SECOND),
    ],
  });
  const url = await mf.ready;
  return { mf, url };
}

/** One POST the worker made to the hooks server. */
export interface HookCall {
  path: string;
  body: Record<string, unknown>;
}

/**
 * The CRM and the ops webhook the worker calls, on a node:http server: every POST is recorded;
 * `/crm` answers what `answer(body)` says (200 by default), and holds its answer while
 * `hold(body)` is true, until `release()`.
 */
export interface Hooks {
  url: string;
  calls: HookCall[];
  answer: (body: Record<string, unknown>) => number;
  hold: (body: Record<string, unknown>) => boolean;
  /** Calls held so far (answered or not). */
  readonly held: number;
  release(): void;
  close(): Promise<void>;
}

export async function startHooks(): Promise<Hooks> {
  const waiting: (() => void)[] = [];
  let held = 0;
  let released = false;
  const hooks: Hooks = {
    url: '',
    calls: [],
    answer: () => 200,
    hold: () => false,
    get held() {
      return held;
    },
    release() {
      released = true;
      for (const go of waiting.splice(0)) go();
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://hooks').pathname;
      const text = Buffer.concat(chunks).toString('utf8');
      const body = (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>;
      hooks.calls.push({ path, body });
      const status = path === '/crm' ? hooks.answer(body) : 200;
      const reply = (): void => void res.writeHead(status).end();
      if (path === '/crm' && hooks.hold(body) && !released) {
        held++;
        waiting.push(reply);
      } else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hooks.url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  return hooks;
}

/** Polls `read` every 50 ms until it gives a value (or fails after `ms`). */
export async function until<T>(
  what: string,
  read: () => T | undefined | Promise<T | undefined>,
  ms = 45_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
