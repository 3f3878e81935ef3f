/**
 * A process with a receiver and no logger whose 401, 413 and 400 summaries are pending (a second
 * refusal of each within the minute): it prints `pending`, then has nothing left to do. The test
 * (default-logging.test.ts) checks that it exits on its own, so that the minute's timers are
 * unref'd. Console output goes to stderr; nothing here holds a real secret.
 */
import { createReceiver } from '@churn-risk/core';
import { createTestDelivery } from '@churn-risk/core/testing';

const receiver = createReceiver({ secret: 'whsec_exit_check', maxBodyBytes: 1_000 });
const forged = createTestDelivery({}, { secret: 'whsec_wrong' });
const large = createTestDelivery({}, { secret: 'whsec_exit_check' });
const invalid = createTestDelivery({ score: 7 }, { secret: 'whsec_exit_check' });
for (let i = 0; i < 2; i += 1) {
  await receiver.handle({ method: 'POST', ...forged });
  await receiver.handle({
    method: 'POST',
    headers: large.headers,
    body: `${large.body}${' '.repeat(1_000)}`,
  });
  await receiver.handle({ method: 'POST', ...invalid });
}
console.log('pending');
