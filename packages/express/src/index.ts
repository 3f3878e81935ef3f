/**
 * @churn-risk/express: Express middleware for churn-risk webhook alerts.
 */
export { createMiddleware } from './create-middleware.js';
export { rawBodySaver, type RequestWithRawBody } from './raw-body-saver.js';
