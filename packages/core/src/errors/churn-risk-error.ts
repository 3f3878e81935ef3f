/**
 * The base of every error the churn-risk packages throw or report: one `instanceof` check for all
 * of them. `code` says what happened, in SCREAMING_SNAKE_CASE (each subclass has its own union of
 * codes; a Postgres error carries the server's SQLSTATE); `status` is the HTTP status when the
 * error is answered as one. `name` is the subclass's own, `cause` keeps the underlying error, and
 * no message holds a secret, a signature or a body.
 *
 * @example
 * receiver.onError((error) => {
 *   if (error instanceof ChurnRiskError) console.warn(error.code, error.message);
 * });
 */
export abstract class ChurnRiskError extends Error {
  /** What happened, e.g. `INVALID_SIGNATURE`, `ALERT_STALLED` or `QUEUE_NOT_FOUND`. */
  abstract readonly code: string;
  /** The HTTP status the error is answered with, where it maps to one. */
  declare readonly status?: number | undefined;
}
