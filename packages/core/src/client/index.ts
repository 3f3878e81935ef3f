export { ChurnRiskClient } from './churn-risk-client.js';
export {
  ServiceError,
  isServiceError,
  type ErrorCode,
  type ServiceErrorInit,
} from './service-error.js';
export { STATUS_CODES, codeForStatus } from './status-codes.js';
export { RETRY_POLICY } from './retry-policy.js';
export { PRODUCTION_BASE_URL, STAGING_BASE_URL } from './base-url.js';
export { DEFAULT_TIMEOUT_MS } from './client-options.js';
export type {
  AtRiskAllOptions,
  AtRiskOptions,
  AtRiskResult,
  AtRiskUser,
  BulkEventItem,
  CallOptions,
  WriteOptions,
  ClientOptions,
  CooldownString,
  EventProperties,
  FetchLike,
  RequestContext,
  ResponseContext,
  RiskScore,
  RiskTier,
  TrackResult,
  UserTraits,
  WatchedUser,
  WatchOptions,
} from './types.js';
