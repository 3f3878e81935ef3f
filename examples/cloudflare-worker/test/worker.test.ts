import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ChurnRiskAlert } from '@churn-risk/core';
import { createSandbox, type Sandbox } from '@churn-risk/sandbox';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driveAlert, eventually } from '../../../test/e2e/drive-alert.js';

// End to end: the example worker, bundled as wrangler bundles it (export conditions `workerd`,
// `worker`, `browser`), runs in workerd through miniflare with wrangler.toml's compatibility date
// and flags (no nodejs_compat) on a real 127.0.0.1 port. The sandbox service signs and POSTs the
// alert to it; the worker's handler writes it to the ALERTS KV namespace, read back here.

const WRANGLER_TOML = readFileSync(new URL('../wrangler.toml', import.meta.url), 'utf8');

/** `compatibility_date` and `compatibility_flags` from wrangler.toml. */
function wranglerSettings(): { date: string; flags: string[] } {
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(WRANGLER_TOML)?.[1];
  const flags = /^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(WRANGLER_TOML)?.[1] ?? '';
  if (date === undefined) throw new Error('wrangler.toml has no compatibility_date');
  return { date, flags: [...flags.matchAll(/"([^"]+)"/g)].map((m) => m[1] as string) };
}

let sandbox: Sandbox;
let mf: Miniflare;
let url: URL;

beforeAll(async () => {
  sandbox = await createSandbox();
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
  const { date, flags } = wranglerSettings();
  mf = new Miniflare({
    modules: true,
    script: bundle.outputFiles[0]?.text ?? '',
    compatibilityDate: date,
    compatibilityFlags: flags,
    kvNamespaces: ['ALERTS'],
    bindings: { CHURN_RISK_WEBHOOK_SECRET: sandbox.webhookSecret },
    host: '127.0.0.1',
    port: 0,
  });
  url = await mf.ready;
});

afterAll(async () => {
  await mf?.dispose();
  await sandbox?.close();
});

describe('examples/cloudflare-worker', () => {
  it('runs without nodejs_compat', () => {
    expect(wranglerSettings().flags).not.toContain('nodejs_compat');
    const settings = WRANGLER_TOML.split('\n').filter((line) => !line.trimStart().startsWith('#'));
    expect(settings.join('\n')).not.toContain('nodejs_compat');
  });

  it('receives the sandbox’s signed alert in workerd and its handler stores it in KV', async () => {
    const userId = 'user_cf_worker_e2e';
    const webhook = new URL('/webhooks/churn-risk', url).href;
    const record = await driveAlert(sandbox, webhook, userId);
    expect(record.attempts.at(-1)?.status).toBe(202);

    const kv = await mf.getKVNamespace('ALERTS');
    const key = await eventually(async () => {
      const { keys } = await kv.list({ prefix: `alert:${userId}:` });
      return keys[0]?.name;
    }, 'the handler to store the alert in KV');
    const stored = JSON.parse((await kv.get(key)) ?? 'null') as ChurnRiskAlert;
    expect(stored).toMatchObject({ event: 'churn_risk_alert', userId, tier: record.alert.tier });
    expect(key).toBe(`alert:${userId}:${record.alert.triggeredAt}`);
  });

  it('refuses a delivery signed with another secret (401), so nothing is stored', async () => {
    const { createTestDelivery } = await import('@churn-risk/core/testing');
    const { headers, body } = createTestDelivery(
      { userId: 'user_cf_forged' },
      { secret: 'whsec_not_the_sandbox_secret' },
    );
    const response = await fetch(new URL('/webhooks/churn-risk', url), {
      method: 'POST',
      headers,
      body,
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'INVALID_SIGNATURE',
    );
    const kv = await mf.getKVNamespace('ALERTS');
    expect((await kv.list({ prefix: 'alert:user_cf_forged:' })).keys).toEqual([]);
  });
});
