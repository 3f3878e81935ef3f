import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

/** The conditions wrangler resolves packages with, plus the workspace's source condition. */
export const WORKERD_CONDITIONS = ['@churn-risk/source', 'workerd', 'worker', 'browser'];

/** A worker bundled for workerd. */
export interface WorkerBundle {
  code: string;
  /** Every module in the bundle (workspace-relative paths). */
  inputs: string[];
  /** The modules with code in the output: `inputs` less those tree-shaking emptied. */
  included: string[];
}

/**
 * Bundles `entry` (a path or file URL) into one ES module the way a Workers build does: export
 * conditions `workerd`, `worker`, `browser` and a neutral platform, so that any import of a Node
 * built-in fails the build instead of relying on `nodejs_compat`. Shared by the Cloudflare
 * adapter's workerd tests and the runtimes' conformance suite.
 */
export async function bundleWorker(
  entry: string | URL,
  options: {
    /**
     * `'browser'` for a worker that bundles a package which picks its Web build through a
     * package.json `browser` field rather than conditions (the OpenTelemetry SDK).
     */
    platform?: 'neutral' | 'browser';
  } = {},
): Promise<WorkerBundle> {
  const browser = options.platform === 'browser';
  const result = await build({
    entryPoints: [typeof entry === 'string' ? entry : fileURLToPath(entry)],
    bundle: true,
    format: 'esm',
    platform: browser ? 'browser' : 'neutral',
    target: 'es2022',
    conditions: WORKERD_CONDITIONS,
    ...(browser ? {} : { mainFields: ['module', 'main'] }),
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (output === undefined) throw new Error('esbuild produced no output');
  const emitted = Object.values(result.metafile.outputs).flatMap((out) =>
    Object.entries(out.inputs).filter(([, { bytesInOutput }]) => bytesInOutput > 0),
  );
  return {
    code: output.text,
    inputs: Object.keys(result.metafile.inputs),
    included: emitted.map(([input]) => input),
  };
}
