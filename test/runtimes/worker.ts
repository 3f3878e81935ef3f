/**
 * The runtime host as a module worker for workerd, bundled by `workerd-bundle.ts` (conditions
 * `workerd`, `worker`, `browser`; no `nodejs_compat`). `ctx` is the real `ExecutionContext`.
 */
import { honoMount } from './hono-mount.js';
import { createHost } from './host.js';

const host = createHost({ hono: honoMount });

export default {
  fetch: (request: Request, env: unknown, ctx: unknown): Promise<Response> =>
    host.fetch(request, env, ctx),
};
