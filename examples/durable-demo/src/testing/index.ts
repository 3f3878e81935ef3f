/** The tests every durable example runs, each a `describe` block (vitest). */
export { describeDurableDemo, type DurableDemoTest } from './describe-demo.js';
export {
  describeWebHealthz,
  type HealthzServer,
  type WebHealthzTest,
} from './describe-web-healthz.js';
