import { fileURLToPath } from 'node:url';
import type { NextConfig } from 'next';

const nextConfig: NextConfig = {
  // What create-next-app 16 writes: route segment config such as `dynamic` is refused, and a route
  // that needs the request's environment opts out of prerendering with `await connection()`.
  cacheComponents: true,
  partialPrefetching: true,
  // The workspace root, so Turbopack resolves the linked @churn-risk packages (their built dist/).
  turbopack: { root: fileURLToPath(new URL('../..', import.meta.url)) },
};

export default nextConfig;
