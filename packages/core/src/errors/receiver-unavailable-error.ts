import { ChurnRiskError } from './churn-risk-error.js';
import { WEBHOOK_ERROR_STATUS } from './webhook-error-status.js';

/** The codes of `ReceiverUnavailableError`: why a verified delivery was not taken now. */
export type ReceiverUnavailableCode = 'CLOSED' | 'OVERLOADED';

/**
 * A verified delivery the receiver could not take now: it is shutting down (`CLOSED`), its queue
 * is full, or its queue's store failed or did not answer in time (`OVERLOADED`). Not a fault of
 * the delivery: it is answered `503` with `Retry-After`, so the sender redelivers it later.
 */
export class ReceiverUnavailableError extends ChurnRiskError {
  override readonly name = 'ReceiverUnavailableError';
  declare readonly code: ReceiverUnavailableCode;
  declare readonly status: number;

  constructor(code: ReceiverUnavailableCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.status = WEBHOOK_ERROR_STATUS[code];
  }
}
