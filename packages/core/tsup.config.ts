import { defineConfig } from 'tsup';

/** The package's entries: those of `exports` in package.json, each with its types. */
const PUBLIC = {
  index: 'src/index.ts',
  store: 'src/store.ts',
  adapter: 'src/adapter.ts',
  testing: 'src/testing.ts',
  cli: 'src/node/failed-cli.ts',
  wire: 'src/wire.ts',
};

export default defineConfig({
  entry: {
    ...PUBLIC,
    'hmac-node': 'src/signature/hmac-node.ts',
    'hmac-web': 'src/signature/hmac-web.ts',
    'otel-node': 'src/observability/otel-node.ts',
    'otel-web': 'src/observability/otel-web.ts',
    'node-request-node': 'src/receiver/node-request-node.ts',
    'node-request-web': 'src/receiver/node-request-web.ts',
    'receiver-verifier': 'src/signature/receiver-verifier.ts',
    'receiver-verifier-workerd': 'src/signature/receiver-verifier-workerd.ts',
    'receiver-verifier-node': 'src/signature/receiver-verifier-node.ts',
    // Internal entries, so that the client and the batcher (classic zod; the wire schemas are the public `wire` entry) get
    // files of their own that `index.js` re-exports: a bundler drops a file none of whose exports
    // are used (`"sideEffects": false`), so a receiver's bundle holds none of them.
    client: 'src/client/index.ts',
    batcher: 'src/batcher/index.ts',
    // `ServiceError` in a file of its own: `isChurnRiskError` (in `index.js`) names it, and in the
    // client's file it would bring the client's schemas and classic zod into any bundle that
    // calls `isChurnRiskError` (the operations page's).
    'service-error': 'src/client/service-error.ts',
  },
  format: ['esm'],
  target: 'node20',
  dts: { entry: PUBLIC },
  clean: true,
  sourcemap: true,
  splitting: true,
  treeshake: true,
  // The HMAC back ends, the OpenTelemetry loader and `receiver.node`'s request path are chosen by
  // the package's `imports` conditions at resolution time.
  external: ['#hmac', '#otel', '#node-request', '#receiver-verifier'],
});
