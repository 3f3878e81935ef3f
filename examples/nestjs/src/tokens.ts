/**
 * Injection tokens. tsx (esbuild) emits no decorator metadata, so Nest cannot read a constructor
 * parameter's type: every injection names its token with `@Inject(TOKEN)` instead.
 */

/** The example's options (`AppOptions`). */
export const APP_OPTIONS = Symbol('APP_OPTIONS');

/** The churn-risk `Receiver`. */
export const CHURN_RISK_RECEIVER = Symbol('CHURN_RISK_RECEIVER');

/** The `AlertLog` the alert handler fills. */
export const ALERT_LOG = Symbol('ALERT_LOG');
