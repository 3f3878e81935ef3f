import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bundleWorker,
  deliverAlert,
  failedRowsOf,
  startQueueWorkerd,
  startRecorder,
  type Recorder,
} from './workerd.test-util.js';

// Queue mode in workerd, on miniflare's Queues (attempts, retries, the dead-letter queue) and D1,
// while D1 or the Queue refuses the consumer's writes (queue-fixture.test-util.ts). The consumer's
// max_retries is 1, so two redeliveries counted as stalls would dead-letter the alert and fail it
// as poison: a verdict that could not be stored must never count as one.
const SECRET = 'whsec_workerd_queue_mode';

let recorder: Recorder;
let mf: Miniflare;
let sequence = 0;

beforeAll(async () => {
  recorder = await startRecorder();
  const { code } = await bundleWorker(new URL('./queue-fixture.test-util.ts', import.meta.url));
  mf = await startQueueWorkerd(code, {
    CHURN_RISK_WEBHOOK_SECRET: SECRET,
    RECORDER_URL: recorder.url,
  });
});

afterAll(async () => {
  await mf?.dispose();
  await recorder?.close();
});

/** Delivers a fresh alert for `userId` to the worker; resolves with the answer's status. */
async function deliver(userId: string): Promise<number> {
  const triggeredAt = new Date(Date.UTC(2026, 4, 1) + ++sequence * 1000).toISOString();
  return deliverAlert(mf, { userId, triggeredAt }, SECRET);
}

const failedRows = (userId: string): Promise<{ tries: number; error: string }[]> =>
  failedRowsOf(mf, userId, 'tries, error');

describe('queue mode in workerd while a store refuses the verdict', () => {
  it('D1 refusing the failed write twice: the alert is tried again, then handled, never failed as stalled', async () => {
    expect(await deliver('d1out_handled')).toBe(202);
    const runs = await recorder.waitFor('/run/d1out_handled', 3);
    // Each run was the last try (a NonRetryableError); the ones whose failure D1 refused to store
    // did not count, and the third run succeeded.
    expect(runs.map((r) => r.body.attempt)).toEqual([0, 0, 0]);
    expect(recorder.reports.filter((r) => r.path === '/error/d1out_handled')).toEqual([]);
    expect(await failedRows('d1out_handled')).toEqual([]);
  }, 60_000);

  it("D1 refusing the failed write twice: an alert whose handler always fails is failed for the handler's failure, onError once", async () => {
    expect(await deliver('d1out_broken')).toBe(202);
    const [report] = await recorder.waitFor('/error/d1out_broken');
    expect(report?.body.name).toBe('NonRetryableError');
    expect(recorder.reports.filter((r) => r.path === '/run/d1out_broken')).toHaveLength(3);
    const rows = await failedRows('d1out_broken');
    expect(rows.map((row) => [row.tries, row.error.split(':')[0]])).toEqual([
      [1, 'HandlersFailedError'],
    ]);
  }, 60_000);

  it('the Queue refusing the retry for two deliveries: the dead-letter queue sends the alert back, and it is handled', async () => {
    expect(await deliver('qout_handled')).toBe(202);
    const runs = await recorder.waitFor('/run/qout_handled', 3);
    // No retry could be sent, so each delivery ran try 0 again; after the second the platform
    // dead-lettered the message, and its consumer sent it back instead of failing it as poison.
    expect(runs.map((r) => r.body.attempt)).toEqual([0, 0, 0]);
    expect(recorder.reports.filter((r) => r.path === '/error/qout_handled')).toEqual([]);
    expect(await failedRows('qout_handled')).toEqual([]);
  }, 60_000);
});
