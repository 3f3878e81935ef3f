/**
 * `pnpm bench verify --runtime=workerd,bun,deno,node` (or `pnpm bench verify-runtimes`): HMAC
 * verification back ends measured inside each runtime, as ratios within the same run.
 * Bun, Deno and Node run `edge/in-runtime.ts` unbundled (so core's `#hmac` is resolved by the
 * runtime itself); workerd runs `edge/workerd-entry.ts` bundled with wrangler's conditions,
 * without nodejs_compat, through miniflare, its batches timed from here.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { formatNumber, formatRatio, markdownTable } from '../lib/table.js';
import type { BenchResult, BenchSettings } from '../lib/types.js';
import { CORE_VERIFIERS, NOBLE } from './edge/edge-candidates.js';
import { edgeRounds, type EdgeResult } from './edge/edge-rounds.js';

export const RUNTIMES = ['workerd', 'bun', 'deno', 'node'] as const;
export type EdgeRuntime = (typeof RUNTIMES)[number];

const run = promisify(execFile);
const ROOT = new URL('../../../', import.meta.url);
const TEST_BIN = new URL('test/node_modules/.bin/', ROOT);
const EDGE = new URL('./edge/', import.meta.url);
/** ~250 B (the usual alert), ~1 KB, 64 KiB. */
const SIZES = [256, 1024, 64 * 1024];

interface RuntimeReport {
  runtime: string;
  nodeCrypto: boolean;
  coreBackend: string;
  bySize: Record<string, EdgeResult[]>;
}

interface Options {
  rounds: number;
  batchMs: number;
}

async function inProcessRuntime(
  runtime: 'bun' | 'deno' | 'node',
  options: Options,
): Promise<RuntimeReport> {
  const entry = fileURLToPath(new URL('in-runtime.ts', EDGE));
  const settings = JSON.stringify({ sizes: SIZES, ...options });
  const condition = '--conditions=@churn-risk/source';
  const [file, args] =
    runtime === 'node'
      ? [process.execPath, [condition, '--import', 'tsx', entry, settings]]
      : runtime === 'bun'
        ? [fileURLToPath(new URL('bun', TEST_BIN)), [condition, entry, settings]]
        : [
            fileURLToPath(new URL('deno', TEST_BIN)),
            ['run', '-A', condition, '--unstable-sloppy-imports', entry, settings],
          ];
  if (!existsSync(file)) throw new Error(`${runtime} is not installed (${file})`);
  const { stdout } = await run(file, args, {
    cwd: fileURLToPath(ROOT),
    timeout: 15 * 60_000,
    killSignal: 'SIGKILL',
    maxBuffer: 16 * 1024 * 1024,
  });
  const line = stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as RuntimeReport;
}

/** The parts of miniflare used here (installed for the tests, test/package.json). */
interface MiniflareModule {
  Miniflare: new (options: Record<string, unknown>) => {
    dispatchFetch(url: string): Promise<{ ok: boolean; status: number; text(): Promise<string> }>;
    dispose(): Promise<void>;
  };
}

/** miniflare and esbuild, installed for the tests (test/package.json). */
async function fromTests<T>(name: string): Promise<T> {
  const require = createRequire(new URL('test/package.json', ROOT));
  return (await import(pathToFileURL(require.resolve(name)).href)) as T;
}

async function workerdRuntime(options: Options): Promise<RuntimeReport> {
  const { Miniflare } = await fromTests<MiniflareModule>('miniflare');
  // The tests' bundler (esbuild from test/package.json), loaded only for this runtime.
  const { bundleWorker } = await import('../../../test/support/workerd-bundle.js');
  const bundle = await bundleWorker(new URL('workerd-entry.ts', EDGE));
  const mf = new Miniflare({
    modules: true,
    script: bundle.code,
    compatibilityDate: '2025-09-01',
    compatibilityFlags: [],
  });
  try {
    const get = async (path: string): Promise<string> => {
      const response = await mf.dispatchFetch(`http://bench${path}`);
      const text = await response.text();
      if (!response.ok) throw new Error(`workerd ${path}: ${response.status} ${text}`);
      return text;
    };
    const bySize: Record<string, EdgeResult[]> = {};
    let coreBackend = '';
    let overheadMs = 0;
    for (const size of SIZES) {
      const info = JSON.parse(await get(`/info?size=${size}`)) as {
        names: string[];
        bytes: number;
        coreBackend: string;
      };
      coreBackend = info.coreBackend;
      // What one dispatchFetch costs by itself (reported; each ~batchMs batch includes it once).
      const empty: number[] = [];
      for (let i = 0; i < 21; i++) {
        const start = performance.now();
        await get(`/run?size=${size}&c=${encodeURIComponent(NOBLE)}&n=0`);
        empty.push(performance.now() - start);
      }
      overheadMs = empty.sort((a, b) => a - b)[10] ?? 0;
      bySize[String(info.bytes)] = await edgeRounds(
        info.names,
        async (name, n) => {
          const start = performance.now();
          await get(`/run?size=${size}&c=${encodeURIComponent(name)}&n=${n}`);
          return performance.now() - start;
        },
        options,
      );
    }
    return {
      runtime: `workerd (miniflare 4, no nodejs_compat; one empty dispatchFetch: ${overheadMs.toFixed(2)} ms)`,
      nodeCrypto: false,
      coreBackend,
      bySize,
    };
  } finally {
    await mf.dispose();
  }
}

function tableFor(results: readonly EdgeResult[]): string {
  const noble = results.find((r) => r.name === NOBLE)?.opsPerSecond ?? Number.NaN;
  const rows = [...results]
    .sort((a, b) => b.opsPerSecond - a.opsPerSecond)
    .map((r) => [
      r.name,
      formatNumber(r.opsPerSecond),
      formatNumber(1e6 / r.opsPerSecond, 1),
      formatRatio(r.opsPerSecond / noble),
      `${formatNumber(r.minOpsPerSecond)} - ${formatNumber(r.maxOpsPerSecond)}`,
    ]);
  return markdownTable(
    ['candidate', 'verifications/s (median)', 'µs each', 'vs @noble/hashes', 'worst - best round'],
    rows,
  );
}

function fastestLine(results: readonly EdgeResult[]): string {
  const backends = results.filter((r) => !CORE_VERIFIERS.includes(r.name));
  const [first] = [...backends].sort((a, b) => b.opsPerSecond - a.opsPerSecond);
  return `fastest back end: ${first?.name ?? '?'}`;
}

/** Parses `--runtime=workerd,bun` (default: all four). */
export function parseRuntimes(values: readonly string[]): EdgeRuntime[] {
  const names = values.flatMap((v) => v.split(',')).filter((v) => v !== '');
  if (names.length === 0) return [...RUNTIMES];
  for (const name of names) {
    if (!(RUNTIMES as readonly string[]).includes(name)) {
      throw new Error(`unknown runtime "${name}"; known: ${RUNTIMES.join(', ')}`);
    }
  }
  return names as EdgeRuntime[];
}

export async function runVerifyRuntimes(
  settings: BenchSettings,
  runtimes: readonly EdgeRuntime[] = RUNTIMES,
): Promise<BenchResult> {
  const options: Options = { rounds: settings.quick ? 3 : 10, batchMs: settings.quick ? 50 : 150 };
  const sections: string[] = [];
  const data: Record<string, RuntimeReport | { error: string }> = {};
  for (const runtime of runtimes) {
    console.error(`verify-runtimes: ${runtime}`);
    let report: RuntimeReport;
    try {
      report =
        runtime === 'workerd'
          ? await workerdRuntime(options)
          : await inProcessRuntime(runtime, options);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      data[runtime] = { error: message };
      sections.push(`#### ${runtime}\n\nFailed: ${message}`);
      continue;
    }
    data[runtime] = report;
    const parts = Object.entries(report.bySize).map(
      ([bytes, results]) =>
        `##### ${formatNumber(Number(bytes))}-byte alert\n\n${tableFor(results)}\n\n${fastestLine(results)}`,
    );
    sections.push(
      `#### ${report.runtime}\n\nnode:crypto: ${report.nodeCrypto ? 'present' : 'absent'}; core's \`#hmac\` resolves to **${report.coreBackend}** here.\n\n${parts.join('\n\n')}`,
    );
  }
  const note =
    "Each candidate verifies one signed alert per operation: hex-decode the `sha256=` header, HMAC-SHA256 over `timestamp.body`, constant-time comparison (crypto.subtle verify compares itself). `crypto.subtle` imports the key once and runs one sign or verify per delivery (awaited). Candidates interleaved round by round (median of the rounds), each checked first to reject a delivery with one changed byte. Bun, Deno and Node time batches in-process; workerd batches are timed from Node around one `dispatchFetch` per batch of ~150 ms (its own cost, in the heading, is included; workerd's clock does not move while a request computes).";
  return {
    name: 'verify-runtimes',
    title: 'Verification back ends inside each runtime',
    markdown: `${sections.join('\n\n')}\n\n${note}`,
    data,
  };
}
