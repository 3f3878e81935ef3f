import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bundleWorker,
  deliverAlert,
  failedRowsOf,
  startQueueWorkerd,
  startRecorder,
  startWorkerd,
  type Recorder,
  type Report,
} from './workerd.test-util.js';

// Order per user in queue mode, in workerd, on miniflare's Queues and D1 (order-fixture.test-util.ts):
// the alerts of one user never run at the same time and start oldest first, an alert waiting for
// its user goes back to the Queue without counting a try or a stall (the consumer's max_retries is
// 1: two redeliveries counted would dead-letter it), a retry keeps its user, and an alert is
// superseded once a newer one of its user was accepted.
const SECRET = 'whsec_workerd_order';

let recorder: Recorder;
let mf: Miniflare;

beforeAll(async () => {
  recorder = await startRecorder();
  const { code } = await bundleWorker(new URL('./order-fixture.test-util.ts', import.meta.url));
  mf = await startQueueWorkerd(code, {
    CHURN_RISK_WEBHOOK_SECRET: SECRET,
    RECORDER_URL: recorder.url,
  });
});

afterAll(async () => {
  await mf?.dispose();
  await recorder?.close();
});

/** The time of `userId`'s alert triggered `minute` minutes after 2026-05-01 10:00 UTC. */
const at = (minute: number): string => new Date(Date.UTC(2026, 4, 1, 10, minute)).toISOString();

/** Delivers the alert of `userId` triggered at `minute`; resolves with the answer's status. */
const deliver = (userId: string, minute: number): Promise<number> =>
  deliverAlert(mf, { userId, triggeredAt: at(minute) }, SECRET);

/** The reports of `userId`, in the order they arrived. */
function reportsOf(userId: string): Report[] {
  return recorder.reports.filter((report) => report.path.endsWith(`/${userId}`));
}

/** The runs of `userId` that started while another of its runs had not ended. */
function overlaps(userId: string): string[] {
  let running: string | undefined;
  const found: string[] = [];
  for (const { path, body } of reportsOf(userId)) {
    if (path.startsWith('/start/')) {
      if (running !== undefined) found.push(`${String(body.at)} while ${running}`);
      running = String(body.at);
    } else if (path.startsWith('/end/')) running = undefined;
  }
  return found;
}

const failedRows = (userId: string): Promise<unknown[]> => failedRowsOf(mf, userId, 'alert_id');

describe('queue mode in order per user, in workerd', () => {
  it('one alert of a user at a time, oldest first; a wait is no try and no stall', async () => {
    // The oldest alert of hold_u fails its first try and holds its user through the retry's 3 s
    // delay; its later alerts, accepted meanwhile newest first (and another user's), wait for it,
    // sent back to the Queue again and again, then run oldest first.
    expect(await deliver('hold_u', 0)).toBe(202);
    await recorder.waitFor('/start/hold_u');
    for (const minute of [4, 2, 3, 1]) {
      expect(await deliver('hold_u', minute)).toBe(202);
      expect(await deliver('free_u', minute)).toBe(202);
    }
    // Every run of the two users has ended, or an alert failed (then the assertions say how).
    await Promise.race([
      Promise.all([recorder.waitFor('/end/hold_u', 6), recorder.waitFor('/end/free_u', 4)]),
      recorder.waitFor('/error/hold_u'),
    ]);
    expect(recorder.reports.filter((r) => r.path.startsWith('/error/'))).toEqual([]);
    const starts = recorder.reports.filter((r) => r.path === '/start/hold_u');
    expect(starts.map((start) => [start.body.at, start.body.attempt])).toEqual([
      [at(0), 0],
      [at(0), 1],
      [at(1), 0],
      [at(2), 0],
      [at(3), 0],
      [at(4), 0],
    ]);
    expect(overlaps('hold_u')).toEqual([]);
    expect(overlaps('free_u')).toEqual([]);
    // Each wait was a new message, sent again after a while: the later alerts waited more often
    // than the consumer's max_retries (1). A wait counted as a redelivery would have
    // dead-lettered them, and counted as a stall, failed them as poison.
    const waits = reportsOf('hold_u')
      .filter((r) => r.path.startsWith('/postponed/'))
      .map((r) => Number(r.body.postponements));
    expect(Math.max(...waits)).toBeGreaterThan(2);
    expect(await failedRows('hold_u')).toEqual([]);
  }, 120_000);

  it('a retry keeps its user: the next alert starts after the retried one completed', async () => {
    expect(await deliver('retry_u', 1)).toBe(202);
    expect(await deliver('retry_u', 2)).toBe(202);
    const starts = await recorder.waitFor('/start/retry_u', 3);
    await recorder.waitFor('/end/retry_u', 3);
    expect(starts.map((start) => [start.body.at, start.body.attempt])).toEqual([
      [at(1), 0],
      [at(1), 1],
      [at(2), 0],
    ]);
    expect(recorder.reports.filter((r) => r.path === '/postponed/retry_u')).not.toEqual([]);
    expect(overlaps('retry_u')).toEqual([]);
  }, 60_000);

  it('an alert is superseded when a newer one of its user was accepted before its try', async () => {
    // The newer first: whichever runs first, the older one's try comes after the newer's acceptance.
    expect(await deliver('sup_u', 2)).toBe(202);
    expect(await deliver('sup_u', 1)).toBe(202);
    const starts = await recorder.waitFor('/start/sup_u', 2);
    await recorder.waitFor('/end/sup_u', 2);
    const seen = new Map(starts.map((start) => [start.body.at, start.body.supersededBy]));
    expect(seen).toEqual(
      new Map([
        [at(1), at(2)],
        [at(2), null],
      ]),
    );
    // The 'skip' handler wrote the newer alert only.
    expect(reportsOf('sup_u').filter((r) => r.path.startsWith('/write/'))).toEqual([
      { path: '/write/sup_u', body: { at: at(2) } },
    ]);
  }, 60_000);
});

describe('createWorker (in memory) in order per user, in workerd', () => {
  it("runs a user's alerts one at a time in the isolate, oldest first", async () => {
    const gated = await startRecorder();
    const { code } = await bundleWorker(
      new URL('./order-worker-fixture.test-util.ts', import.meta.url),
    );
    const { mf: worker } = await startWorkerd(code, {
      CHURN_RISK_WEBHOOK_SECRET: SECRET,
      RECORDER_URL: gated.url,
    });
    try {
      const send = (minute: number): Promise<number> =>
        deliverAlert(worker, { userId: 'mem_u', triggeredAt: at(minute) }, SECRET);
      expect(await send(0)).toBe(202);
      await gated.waitFor('/start/mem_u');
      // Accepted while the first runs, newest first: they wait, then run oldest first.
      expect(await send(2)).toBe(202);
      expect(await send(1)).toBe(202);
      gated.open();
      await gated.waitFor('/end/mem_u', 3);
      expect(gated.reports.map((r) => [r.path, r.body.at])).toEqual(
        [0, 1, 2].flatMap((minute) => [
          ['/start/mem_u', at(minute)],
          ['/end/mem_u', at(minute)],
        ]),
      );
    } finally {
      await worker.dispose();
      await gated.close();
    }
  }, 60_000);
});
