import type { ChurnRiskAlert } from '@churn-risk/core';
import { createSandbox, type Sandbox } from '@churn-risk/sandbox';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driveAlert, eventually } from '../../../test/e2e/drive-alert.js';
import {
  bundleExample,
  startExample,
  startHooks,
  WRANGLER_TOML,
  wranglerSettings,
  type Hooks,
} from './example-workerd.js';

// End to end: the example worker runs in workerd through miniflare with wrangler.toml's settings
// (example-workerd.ts) on a real 127.0.0.1 port. The sandbox service signs and POSTs the alert to
// it; the worker sends it to its Queue, and the consumer's handler writes it to the ALERTS KV
// namespace, read back here.

let sandbox: Sandbox;
let hooks: Hooks;
let mf: Miniflare;
let url: URL;

beforeAll(async () => {
  sandbox = await createSandbox();
  hooks = await startHooks();
  ({ mf, url } = await startExample(await bundleExample(), {
    secret: sandbox.webhookSecret,
    crm: `${hooks.url}/crm`,
    ops: `${hooks.url}/ops`,
  }));
});

afterAll(async () => {
  await mf?.dispose();
  await hooks?.close();
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
