/**
 * The demo harness of the durable examples (`examples/redis`, `examples/postgres`): it starts the
 * back end's server, the sandbox and the example's web and worker processes, drives deliveries,
 * kills and restarts the worker, and tallies what was handled. Not part of what an example
 * teaches; `examples/demo` uses its report and `waitFor` too.
 */
export { StoreMissingError, type DemoBackend, type DemoServer } from './backend.js';
export { startChild, type Child, type ChildOptions } from './child-process.js';
export { createReport, type Report } from './report.js';
export { runDurableDemo } from './run-demo.js';
export { waitFor } from './wait-for.js';
