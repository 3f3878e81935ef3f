import { ChurnRiskError } from './churn-risk-error.js';
import { WEBHOOK_ERROR_STATUS } from './webhook-error-status.js';

/**
 * `mode: 'sync'`: a handler of the delivered alert failed after its retries. Answered `500`
 * `HANDLER_FAILED`, so that the sender's own retries redeliver the alert. The message never holds
 * the handler's error (it may carry internal details): `onError` gets that.
 */
export class SyncHandlingFailedError extends ChurnRiskError {
  override readonly name = 'SyncHandlingFailedError';
  override readonly code = 'HANDLER_FAILED' as const;
  override readonly status: number = WEBHOOK_ERROR_STATUS.HANDLER_FAILED;
}
