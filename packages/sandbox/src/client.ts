/**
 * @churn-risk/sandbox/client: `SandboxClient`, a typed client of the sandbox's developer routes
 * (replay, delivery filters, test alerts, time travel, the dashboard's state). It uses `fetch`
 * only, so it runs anywhere `fetch` does and does not load the sandbox server.
 */
export { SandboxClient, type SandboxClientOptions } from './client/sandbox-client.js';
export type { DeliveryFilter } from './deliveries/delivery-filter.js';
export type { Deliveries, DeliveryRecord, DeliveryState } from './deliveries/delivery-record.js';
export type { DeliveryAttempt } from './deliveries/send-attempt.js';
export type { ClockState } from './routes/clock-route.js';
export type { DashboardState, DashboardUser, DashboardWatch } from './dashboard/dashboard-state.js';
