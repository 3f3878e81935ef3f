import { describe, expect, it } from 'vitest';
import { createOpsHandler, type FailedAlertJson, type OpsQueue } from '../src/index.js';
import { authorize, bodyOf, get, postRetry } from './client.js';
import { makeAlert, until, type FailingReceiver } from './fixture.js';

/** A back end under test: its failed set, a receiver that fails alerts on it, and a way to run them. */
export interface OpsBackend {
  queue: OpsQueue;
  fixture: FailingReceiver;
  /** Runs what is due until `done()` (a receiver that consumes by itself just waits). */
  settle(done: () => Promise<boolean>): Promise<void>;
  close(): Promise<void>;
}

interface FailedList {
  alerts: FailedAlertJson[];
  next: number | null;
}

/**
 * The JSON API and the page over a real back end: failed alerts listed newest first with what
 * the on-call engineer needs, retry one (only its failed handler runs), retry all, escaping.
 */
export function opsApiSuite(name: string, create: () => Promise<OpsBackend>): void {
  describe(`the operations API over ${name}`, () => {
    it('lists failed alerts newest first, retries one (only its failed handler runs) and then all', async () => {
      const backend = await create();
      try {
        const { queue, fixture } = backend;
        const ops = createOpsHandler({ queue, authorize });
        const alerts = [
          makeAlert(),
          makeAlert(),
          makeAlert({ recommendation: '<script>window.pwned=1</script>' }),
        ];
        for (const alert of alerts) {
          await fixture.deliver(alert);
          // One at a time, so that the failure times are in delivery order.
          await backend.settle(async () =>
            (await queue.failed()).some((f) => f.alert.userId === alert.userId),
          );
        }
        const list = await bodyOf<FailedList>(await get(ops, '/api/failed?limit=2'));
        expect(list.alerts.map((f) => f.alert.userId)).toEqual([
          alerts[2]?.userId,
          alerts[1]?.userId,
        ]);
        expect(list.next).toBe(2);
        const [newest] = list.alerts;
        expect(newest).toMatchObject({ tries: 1, succeeded: ['audit'] });
        expect(newest?.error).toContain('crm is down');
        expect(Date.parse(newest?.failedAt ?? '')).toBeGreaterThan(Date.now() - 60_000);
        const status = await bodyOf<{ counts: { failed: number }; health: { reachable: boolean } }>(
          await get(ops, '/api/counts'),
        );
        expect(status.counts.failed).toBe(3);
        expect(status.health.reachable).toBe(true);

        const page = await (await get(ops, '/')).text();
        expect(page).toContain('&lt;script&gt;window.pwned=1&lt;/script&gt;');
        expect(page).not.toContain('<script>window.pwned');

        fixture.broken = false;
        const audits = fixture.runs.audit.length;
        const oldest = (await bodyOf<FailedList>(await get(ops, '/api/failed?offset=2'))).alerts[0];
        const retried = await postRetry(ops, { id: oldest?.id });
        expect(await bodyOf(retried)).toEqual({ retried: 1 });
        await backend.settle(
          async () => fixture.runs.crm.filter((u) => u === oldest?.alert.userId).length === 2,
        );
        expect(fixture.runs.audit.length).toBe(audits);
        await until(async () => (await queue.failed()).length === 2);

        expect(await bodyOf(await postRetry(ops, { all: true }))).toEqual({ retried: 2 });
        await backend.settle(
          async () => (await queue.failed()).length === 0 && fixture.runs.crm.length === 6,
        );
        expect(fixture.runs.audit.length).toBe(audits);
        const after = await bodyOf<{ counts: { failed: number } }>(await get(ops, '/api/counts'));
        expect(after.counts.failed).toBe(0);
        expect(await (await get(ops, '/')).text()).toContain('No failed alerts');
      } finally {
        await backend.close();
      }
    });

    it('answers 401 and no data without authorization, and 404 for an id that is not failed', async () => {
      const backend = await create();
      try {
        const ops = createOpsHandler({ queue: backend.queue, authorize });
        const alert = makeAlert();
        await backend.fixture.deliver(alert);
        await backend.settle(async () => (await backend.queue.failed()).length === 1);
        for (const path of ['/', '/api/failed', '/api/counts']) {
          const response = await get(ops, path, {});
          expect(response.status).toBe(401);
          expect(await response.text()).not.toContain(alert.userId);
        }
        const missing = await postRetry(ops, { id: 'no-such-alert' });
        expect(missing.status).toBe(404);
        expect((await backend.queue.failed()).length).toBe(1);
      } finally {
        await backend.close();
      }
    });
  });
}
