// The receiver-level cases, shared by `storeContract` and `pushQueueContract`: two receivers (two
// processes, or two isolates) on one back end, end to end.
import type { AlertContext } from '../receiver/types.js';
import { receiverOn, type RunReceiverCase } from './receiver-platform.js';
import { receiverRetryCases } from './receiver-retry-cases.js';
import { check, delivery, same } from './support.js';

/**
 * Registers the receiver-level cases: one handler run for two concurrent deliveries of one alert,
 * the tries (see `receiverRetryCases`), health and `503 CLOSED` after close.
 */
export function receiverCases(run: RunReceiverCase, timeout: number): void {
  run(
    'receivers: two concurrent deliveries of one alert run its handler once',
    async (platform, all) => {
      const first = receiverOn(platform, all);
      const second = receiverOn(platform, all);
      const seen: [string, number][] = [];
      for (const [name, receiver] of [
        ['a', first],
        ['b', second],
      ] as const) {
        receiver.on(
          'churn_risk_alert',
          (_alert, c: AlertContext) => void seen.push([name, c.attempt]),
        );
      }
      const request = delivery();
      const answers = await Promise.all([first.handle(request), second.handle(request)]);
      same(
        answers.map((x) => x.status),
        [202, 202],
        'the answers',
      );
      same(
        answers.map((x) => x.body).sort(),
        ['{"received":true,"duplicate":true}', '{"received":true}'],
        'one accepted, one duplicate',
      );
      await platform.settle(all);
      same(seen.length, 1, 'handler runs');
      same(seen[0]?.[1], 0, 'the attempt');
    },
  );

  receiverRetryCases(run);

  run('receivers: health, and 503 CLOSED after close', async (platform, all) => {
    const receiver = receiverOn(platform, all);
    receiver.on('churn_risk_alert', () => undefined);
    const health = await receiver.health();
    same([health.ok, health.queue?.reachable], [true, true], 'health');
    await receiver.close({ timeoutMs: timeout });
    const answer = await receiver.handle(delivery());
    same(answer.status, 503, 'the status after close');
    const body = JSON.parse(answer.body) as { error?: { code?: string } };
    same(body.error?.code, 'CLOSED', 'the code after close');
    check(answer.headers['retry-after'] !== undefined, 'Retry-After is set');
  });
}
