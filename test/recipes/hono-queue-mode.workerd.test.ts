import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDelivery } from '@churn-risk/core/testing';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleWorker } from '../support/workerd-bundle.js';
import { startRecorder, type Recorder } from '../../packages/cloudflare/src/workerd.test-util.js';

// The Cloudflare guide's recipe "Hono on Workers in queue mode", run as written: its code block
// is read from docs/cloudflare.md (so the guide cannot drift from what is tested), bundled the way
// wrangler bundles a worker, and run in workerd on miniflare's real Queues and D1 with the
// bindings of the recipe's wrangler.toml. The block's two free names, `storeIt` and
// `pageSomeone` (declared in its snippet-context), come from a module of this test that reports
// to a recorder; `storeIt` fails for a user id holding `broken`, with a NonRetryableError, so that
// its first try is its last.

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SECRET = 'whsec_hono_queue_recipe';
const FIRST_LINE = '// src/worker.ts: a Hono app that receives churn-risk alerts in queue mode';

/** The recipe's code block in docs/cloudflare.md. */
function recipeBlock(): string {
  const guide = readFileSync(join(ROOT, 'docs', 'cloudflare.md'), 'utf8');
  const start = guide.indexOf(`\`\`\`ts\n${FIRST_LINE}`);
  expect(start, 'docs/cloudflare.md holds the Hono queue-mode recipe').toBeGreaterThan(-1);
  const code = guide.slice(start + '```ts\n'.length);
  return code.slice(0, code.indexOf('\n```'));
}

const CONTEXT = `
import { NonRetryableError, type ChurnRiskAlert, type ErrorHandler } from '@churn-risk/core';

/** Where the reports go: set from env.RECORDER_URL by the entry before each call. */
export const recorder = { url: '' };

async function report(path: string, body: Record<string, unknown>): Promise<void> {
  const response = await fetch(recorder.url + path, { method: 'POST', body: JSON.stringify(body) });
  await response.text();
}

export async function storeIt(alert: ChurnRiskAlert): Promise<void> {
  await report('/run/' + alert.userId, { tier: alert.tier });
  if (alert.userId.includes('broken')) throw new NonRetryableError('the store refused it');
}

export const pageSomeone: ErrorHandler = async (error, alert) => {
  await report('/error/' + alert.userId, { message: error instanceof Error ? error.message : '' });
};
`;

const ENTRY = `
import worker from './recipe.js';
import { recorder } from './context.js';

export default {
  fetch(request: Request, env: { RECORDER_URL: string }, ctx: unknown) {
    recorder.url = env.RECORDER_URL;
    return worker.fetch(request, env as never, ctx as never);
  },
  queue(batch: never, env: { RECORDER_URL: string }) {
    recorder.url = env.RECORDER_URL;
    return worker.queue(batch, env as never);
  },
};
`;

/** Miniflare with the recipe's wrangler.toml: the Queue, its dead-letter queue, D1. */
function start(code: string, bindings: Record<string, string>): Miniflare {
  return new Miniflare({
    modules: true,
    script: code,
    compatibilityDate: '2025-09-01',
    compatibilityFlags: [],
    bindings,
    d1Databases: ['CHURN_RISK_DB'],
    queueProducers: { CHURN_RISK_ALERTS: { queueName: 'churn-risk-alerts' } },
    queueConsumers: {
      'churn-risk-alerts': {
        maxBatchSize: 10,
        maxBatchTimeout: 1,
        maxRetries: 3,
        deadLetterQueue: 'churn-risk-alerts-failed',
      },
      'churn-risk-alerts-failed': { maxBatchSize: 10, maxBatchTimeout: 1 },
    },
  });
}

let recorder: Recorder;
let code: string;
let mf: Miniflare;
let workDir: string;

beforeAll(async () => {
  recorder = await startRecorder();
  // Under test/, so that the packages resolve from test/node_modules as a user's would.
  workDir = mkdtempSync(join(ROOT, 'test', 'recipes', '.recipe-'));
  writeFileSync(join(workDir, 'context.ts'), CONTEXT);
  writeFileSync(
    join(workDir, 'recipe.ts'),
    `import { storeIt, pageSomeone } from './context.js';\n${recipeBlock()}\n`,
  );
  writeFileSync(join(workDir, 'entry.ts'), ENTRY);
  ({ code } = await bundleWorker(join(workDir, 'entry.ts')));
  mf = start(code, { CHURN_RISK_WEBHOOK_SECRET: SECRET, RECORDER_URL: recorder.url });
  await mf.ready;
});

afterAll(async () => {
  await mf?.dispose();
  await recorder?.close();
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
});

let sequence = 0;

/** Posts a signed alert for `userId` to the Hono route; the answer's status and body. */
async function deliver(
  target: Miniflare,
  userId: string,
  triggeredAt = new Date(Date.UTC(2026, 5, 1) + ++sequence * 1000).toISOString(),
): Promise<{ status: number; body: Record<string, unknown> }> {
  const { headers, body } = createTestDelivery({ userId, triggeredAt }, { secret: SECRET });
  const response = await target.dispatchFetch('http://worker.test/webhooks/churn-risk', {
    method: 'POST',
    headers,
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function failedRows(userId: string): Promise<{ alert_id: string; error: string }[]> {
  const db = await mf.getD1Database('CHURN_RISK_DB');
  const { results } = await db
    .prepare('SELECT alert_id, error FROM churn_risk_failed WHERE alert_id LIKE ?1')
    .bind(`${userId}:%`)
    .all<{ alert_id: string; error: string }>();
  return results;
}

describe("docs/cloudflare.md's Hono on Workers in queue mode, in workerd", () => {
  it('answers a signed delivery 202 and runs the handler from the Queue, once; a redelivery is a duplicate', async () => {
    const triggeredAt = '2026-06-02T10:00:00.000Z';
    expect(await deliver(mf, 'hq_ok', triggeredAt)).toEqual({
      status: 202,
      body: { received: true },
    });
    const [run] = await recorder.waitFor('/run/hq_ok');
    expect(run?.body).toEqual({ tier: 'high' });
    // The identity was claimed in D1, by the tables the recipe never created itself.
    expect(await deliver(mf, 'hq_ok', triggeredAt)).toEqual({
      status: 202,
      body: { received: true, duplicate: true },
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(recorder.reports.filter((r) => r.path === '/run/hq_ok')).toHaveLength(1);
    expect(await failedRows('hq_ok')).toEqual([]);
  }, 60_000);

  it("stores an alert whose handler failed its last try in D1's failed set, with onError once", async () => {
    expect((await deliver(mf, 'hq_broken')).status).toBe(202);
    const [report] = await recorder.waitFor('/error/hq_broken');
    expect(report?.body).toEqual({ message: 'the store refused it' });
    const rows = await failedRows('hq_broken');
    expect(rows).toHaveLength(1);
    expect(rows[0]?.error).toContain('the store refused it');
    expect(recorder.reports.filter((r) => r.path === '/run/hq_broken')).toHaveLength(1);
    expect(recorder.reports.filter((r) => r.path === '/error/hq_broken')).toHaveLength(1);
  }, 60_000);

  it('answers a missing secret 500 INTERNAL_ERROR in JSON naming the binding and wrangler secret put, and runs nothing', async () => {
    const unset = start(code, { RECORDER_URL: recorder.url });
    try {
      await unset.ready;
      const { status, body } = await deliver(unset, 'hq_unset');
      expect(status).toBe(500);
      const error = body.error as { code: string; message: string };
      expect(error.code).toBe('INTERNAL_ERROR');
      expect(error.message).toContain('env.CHURN_RISK_WEBHOOK_SECRET');
      expect(error.message).toContain('npx wrangler secret put CHURN_RISK_WEBHOOK_SECRET');
    } finally {
      await unset.dispose();
    }
    expect(recorder.reports.filter((r) => r.path.endsWith('/hq_unset'))).toEqual([]);
  }, 60_000);
});
