// The tries of a receiver on a shared back end: only the failed handler is retried, in either
// process; after the last try `onError` once per failed handler and `retry(id)` runs it again; a
// `NonRetryableError`, or `shouldRetry` answering false, ends the tries at once.
import { NonRetryableError } from '../errors/non-retryable-error.js';
import type { RetryOptions } from '../receiver/types.js';
import { receiverOn, type RunReceiverCase } from './receiver-platform.js';
import { check, delivery, queuedAlert, same } from './support.js';

/** Registers the receiver-level cases of retries, failures and `retry(id)`. */
export function receiverRetryCases(run: RunReceiverCase): void {
  run('receivers: retries only the failed handler, in either process', async (platform, all) => {
    const receivers = [receiverOn(platform, all, 2), receiverOn(platform, all, 2)];
    const attempts: Record<string, number[]> = { ok: [], flaky: [] };
    const errors: unknown[] = [];
    for (const receiver of receivers) {
      receiver.on('churn_risk_alert', (_a, c) => void attempts.ok?.push(c.attempt), { id: 'ok' });
      receiver.on(
        'churn_risk_alert',
        (_a, c) => {
          attempts.flaky?.push(c.attempt);
          if (c.attempt < 2) throw new Error('not yet');
        },
        { id: 'flaky' },
      );
      receiver.onError((error) => void errors.push(error));
    }
    same((await receivers[0]?.handle(delivery()))?.status, 202, 'the answer');
    await platform.settle(all);
    same(attempts, { ok: [0], flaky: [0, 1, 2] }, 'the tries');
    same(errors.length, 0, 'onError calls');
  });

  run(
    'receivers: after the last try onError once per failed handler; retry(id) runs it again',
    async (platform, all) => {
      const receivers = [receiverOn(platform, all, 1), receiverOn(platform, all, 1)];
      let broken = true;
      let crmRuns = 0;
      let auditRuns = 0;
      const reported: [string, number][] = [];
      for (const receiver of receivers) {
        receiver.on(
          'churn_risk_alert',
          () => {
            auditRuns++;
          },
          { id: 'audit' },
        );
        receiver.on(
          'churn_risk_alert',
          () => {
            crmRuns++;
            if (broken) throw new Error('CRM down');
          },
          { id: 'crm' },
        );
        receiver.onError((error, _alert, context) => {
          reported.push([error instanceof Error ? error.message : String(error), context.attempt]);
        });
      }
      await receivers[1]?.handle(delivery());
      await platform.settle(all);
      same(reported, [['CRM down', 1]], 'onError calls');
      const failed = await platform.failed();
      same(failed.length, 1, 'failed alerts');
      check(
        /crm/.test(failed[0]?.error ?? ''),
        `the failed entry names the handler: ${failed[0]?.error ?? ''}`,
      );
      broken = false;
      await platform.retry(failed[0]?.id ?? '');
      await platform.settle(all);
      same([crmRuns, auditRuns], [3, 1], 'crm and audit runs after retry(id)');
      same((await platform.failed()).length, 0, 'failed alerts after the retry');
    },
  );

  run(
    'receivers: a NonRetryableError, or shouldRetry answering false, ends the tries at once',
    async (platform, all) => {
      const asked: number[] = [];
      const retries: RetryOptions = {
        retries: 3,
        backoffMs: () => 5,
        shouldRetry: (_error, attempt) => {
          asked.push(attempt);
          return attempt < 1;
        },
      };
      const receivers = [receiverOn(platform, all, retries), receiverOn(platform, all, retries)];
      const fatal = queuedAlert();
      const flaky = queuedAlert();
      const attempts: Record<string, number[]> = { fatal: [], flaky: [] };
      const reported: [string, number][] = [];
      for (const receiver of receivers) {
        receiver.on('churn_risk_alert', (alert, c) => {
          const fatalOne = alert.userId === fatal.alert.userId;
          attempts[fatalOne ? 'fatal' : 'flaky']?.push(c.attempt);
          throw fatalOne ? new NonRetryableError('no such account') : new Error('CRM down');
        });
        receiver.onError((error, _alert, context) => {
          reported.push([error instanceof Error ? error.name : String(error), context.attempt]);
        });
      }
      same((await receivers[0]?.handle(delivery(fatal)))?.status, 202, 'the first answer');
      same((await receivers[1]?.handle(delivery(flaky)))?.status, 202, 'the second answer');
      await platform.settle(all);
      same(attempts, { fatal: [0], flaky: [0, 1] }, 'the tries');
      // A NonRetryableError is never retried, without asking shouldRetry.
      same(asked, [0, 1], 'the attempts shouldRetry was asked about');
      same(
        reported.sort(),
        [
          ['Error', 1],
          ['NonRetryableError', 0],
        ],
        'onError calls (error, attempt)',
      );
      const failed = (await platform.failed()).map((f) => [f.alert.userId, f.tries]).sort();
      same(
        failed,
        [
          [fatal.alert.userId, 1],
          [flaky.alert.userId, 2],
        ].sort(),
        'the failed alerts and their tries',
      );
    },
  );
}
