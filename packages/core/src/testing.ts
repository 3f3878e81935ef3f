/**
 * `@churn-risk/core/testing`: signed test deliveries for your own webhook tests (`signPayload` signs
 * any body as the service does), and the contract suites every durable back end passes.
 *
 * @example
 * import { createTestDelivery } from '@churn-risk/core/testing';
 *
 * const { headers, body } = createTestDelivery({ userId: 'user_42', score: 0.91 }, { secret: 'whsec_test' });
 * const response = await receiver.fetch(
 *   new Request('http://localhost/webhooks/churn-risk', { method: 'POST', headers, body }),
 * );
 * // response.status === 202
 */
export { signPayload, type SignPayloadOptions, type SignedHeaders } from './signature/sign.js';
export { pushQueueContract, type PushQueueContractOptions } from './testing/push-queue-contract.js';
export type { ReceiverPlatform } from './testing/receiver-platform.js';
export { storeContract, type StoreContractOptions } from './testing/store-contract.js';
export type { ContractTestApi } from './testing/support.js';
export {
  createTestAlert,
  createTestDelivery,
  type TestDelivery,
  type TestDeliveryOptions,
} from './testing/test-delivery.js';
