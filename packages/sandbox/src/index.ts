/**
 * @churn-risk/sandbox: a local churn-risk service for development, examples and
 * tests: the REST API in memory, scoring, watches and signed webhook deliveries with retries.
 */
export {
  createSandbox,
  generateApiKey,
  generateWebhookSecret,
  DEFAULT_MAX_BODY_BYTES,
  type Sandbox,
  type SandboxOptions,
} from './create-sandbox.js';
export { systemClock, type SandboxClock, type TimerHandle } from './clock/clock.js';
export { createManualClock, MANUAL_CLOCK_START, type ManualClock } from './clock/manual-clock.js';
export type { Deliveries, DeliveryRecord, DeliveryState } from './deliveries/delivery-record.js';
export type { DeliveryFilter } from './deliveries/delivery-filter.js';
export type { ChaosOptions, ChaosSettings } from './chaos/chaos.js';
export type { ClockState } from './routes/clock-route.js';
export type { DashboardState, DashboardUser, DashboardWatch } from './dashboard/dashboard-state.js';
export type { ScorePoint } from './users/user-store.js';
export type { DeliveryAttempt } from './deliveries/send-attempt.js';
export { DELIVERY_POLICY, retryDelayMs } from './deliveries/retry-schedule.js';
export {
  scoreUser,
  type ComputedRisk,
  type ScoreInput,
  type ScoredEvent,
} from './scoring/score-user.js';
export { tierFor, type RiskTier } from './scoring/tier.js';
export {
  NEGATIVE_EVENTS,
  RECOMMENDATIONS,
  HEALTHY_RECOMMENDATION,
  type SignalId,
} from './scoring/signal-table.js';
export type { ChurnRiskService, RiskScore, AtRiskResult } from './service/churn-risk-service.js';
export type { WatchedUser } from './watches/watch-registry.js';
export type { RateLimitOptions } from './server/rate-limiter.js';
export { API_ERROR_STATUS, type ApiErrorCode } from './server/api-error.js';
