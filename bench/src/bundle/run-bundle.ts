/**
 * `pnpm bench bundle`: the sizes of the READMEs' workers and Lambda handlers, and of the
 * operations page's Worker, bundled and minified (raw, minified, gzip, against the 25 KiB gzip
 * budget, 30 KiB for the page), what each package
 * weighs in them, and the time to import each bundle in a fresh Node process, beside the time to
 * import an empty module (and `node:crypto`, which the Lambda bundle imports) in the same rounds.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { formatBytes, formatNumber, markdownTable, median } from '../lib/table.js';
import type { BenchResult, BenchSettings } from '../lib/types.js';
import { ALL_CASES, bundleReadme, gzipBudgetOf, type ReadmeBundle } from './readme-bundles.js';

/** Milliseconds a fresh Node process takes to `import()` the module at `path`. */
async function importMs(path: string): Promise<number> {
  const script = [
    `const started = performance.now();`,
    `await import(${JSON.stringify(pathToFileURL(path).href)});`,
    `console.log(performance.now() - started);`,
  ].join('\n');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '--eval', script],
    {
      encoding: 'utf8',
      timeout: 60_000,
      // The Lambda examples read their settings at module level; nothing else reads the
      // environment. (The queue-mode bundle finds no AWS SDK from the temporary folder: its time
      // is its own; on Lambda the runtime's SDK is loaded at cold start on top of it.)
      env: {
        ...process.env,
        CHURN_RISK_WEBHOOK_SECRET: 'whsec_bench_bundle',
        CHURN_RISK_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/churn-risk-alerts',
        CHURN_RISK_DEDUPE_TABLE: 'churn-risk-identities',
        CHURN_RISK_FAILED_TABLE: 'churn-risk-failed',
      },
    },
  );
  return Number(stdout.trim());
}

/** Import times, rounds interleaved (the baselines, then each bundle) so drift hits all alike. */
async function importTimes(
  files: Record<string, string>,
  rounds: number,
): Promise<Record<string, number[]>> {
  const times: Record<string, number[]> = Object.fromEntries(
    Object.keys(files).map((name) => [name, []]),
  );
  for (let round = 0; round < rounds; round++) {
    for (const [name, path] of Object.entries(files)) times[name]?.push(await importMs(path));
  }
  return times;
}

export async function runBundle(settings: BenchSettings): Promise<BenchResult> {
  const bundles: (ReadmeBundle & { budget: number })[] = [];
  for (const entry of ALL_CASES) {
    bundles.push({ ...(await bundleReadme(entry)), budget: gzipBudgetOf(entry) });
  }

  const dir = mkdtempSync(join(tmpdir(), 'churn-risk-bench-bundle-'));
  let times: Record<string, number[]>;
  try {
    // The baselines: an empty module, and what the Lambda bundle imports from Node (its HMAC back
    // end), for scale; then each bundle.
    const sources: [string, string][] = [
      ['empty module', 'export {};\n'],
      ['node:crypto alone', "import 'node:crypto';\n"],
      ...bundles.map((bundle): [string, string] => [bundle.name, bundle.code]),
    ];
    const files: Record<string, string> = {};
    sources.forEach(([name, source], index) => {
      const path = join(dir, `module-${index}.mjs`);
      writeFileSync(path, source);
      files[name] = path;
    });
    times = await importTimes(files, settings.quick ? 5 : 21);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const baseline = median(times['empty module'] ?? []);
  const size = (bytes: number): string => `${formatNumber(bytes)} B (${formatBytes(bytes)})`;
  const sizeRows = bundles.map((b) => [
    b.name,
    size(b.raw),
    size(b.min),
    size(b.gzip),
    `${formatNumber(b.budget)} B: ${b.gzip <= b.budget ? 'met' : 'MISSED'}`,
  ]);
  const packageRows = bundles.flatMap((b) =>
    b.packages.map((p) => [
      b.name,
      p.name,
      formatBytes(p.bytes),
      `${formatNumber((100 * p.bytes) / b.min, 1)} %`,
    ]),
  );
  const timeRows = Object.entries(times).map(([name, values]) => {
    const ms = median(values);
    return [
      name,
      formatNumber(ms, 2),
      name === 'empty module' ? '' : `+${formatNumber(ms - baseline, 2)}`,
      `${formatNumber(Math.min(...values), 2)} / ${formatNumber(Math.max(...values), 2)}`,
    ];
  });
  const markdown = [
    "The READMEs' examples (the Cloudflare worker; the Lambda handler; the Cloudflare worker in queue mode, `createQueueWorker`; the Lambda handler in queue mode, `createSqsQueue` with `createQueueReceiver`, with `@aws-sdk/*` external as the README bundles it: Lambda's Node runtimes ship the SDK) bundled by esbuild from the built packages, minified: the workers with the conditions `workerd`, `worker`, `browser`, the handlers for Node (the queue-mode handler with the flags of the Lambda README's `npx esbuild` command); and the ops README's Worker (`createOpsHandler` over `createFailedStore`, D1), bundled as the workers are. gzip at zlib's default level.",
    '',
    markdownTable(['bundle', 'raw', 'minified', 'gzip', 'budget'], sizeRows),
    '',
    'What each package weighs in the minified bundles (esbuild metafile):',
    '',
    markdownTable(['bundle', 'package', 'minified', 'share'], packageRows),
    '',
    `Import time in a fresh Node ${process.version} process (\`await import()\` of the bundle file), median of ${times['empty module']?.length ?? 0} rounds, beside an empty module and \`node:crypto\` alone (the Lambda bundle's HMAC back end) imported in the same rounds:`,
    '',
    markdownTable(['module', 'ms (median)', 'vs empty module', 'min / max'], timeRows),
  ].join('\n');
  return {
    name: 'bundle',
    title: 'Bundle sizes and import time (at most 25 KiB gzip; the ops Worker 30 KiB)',
    markdown,
    data: {
      bundles: bundles.map(({ code: _code, ...rest }) => rest),
      importMs: times,
    },
  };
}
