/**
 * @churn-risk/koa: Koa 3 middleware for churn-risk webhook alerts.
 */
export { createMiddleware } from './create-middleware.js';
