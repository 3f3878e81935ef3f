/**
 * @churn-risk/fastify: Fastify plugin for churn-risk webhook alerts.
 */
import { churnRiskPlugin } from './churn-risk-plugin.js';

export { churnRiskPlugin, type ChurnRiskPluginOptions } from './churn-risk-plugin.js';
export default churnRiskPlugin;
