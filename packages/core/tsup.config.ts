import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    testing: 'src/testing.ts',
    cli: 'src/cli/failed-cli.ts',
    'hmac-node': 'src/signature/hmac-node.ts',
    'hmac-web': 'src/signature/hmac-web.ts',
  },
  format: ['esm'],
  target: 'node20',
  dts: true,
  clean: true,
  sourcemap: true,
  splitting: true,
  treeshake: true,
  // The HMAC back end is chosen by the package's `imports` conditions at resolution time.
  external: ['#hmac'],
});
