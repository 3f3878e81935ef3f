/**
 * Runs the benchmarks: `pnpm bench` (all), `pnpm bench verify http` (some), `--quick` (short runs,
 * a check that everything works), `--only=fastify` (only the cases whose name contains the text),
 * `--before=<git-ref>` (receiver, http, redis: the packages built at that commit measured beside
 * the working tree's in the same rounds). Prints Markdown and writes bench/results/<name>.{md,json}.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { prepareBefore } from './lib/before-build.js';
import { machineInfo, machineMarkdown } from './lib/machine.js';
import { beforeLabel } from './lib/packages.js';
import type { BenchResult, BenchSettings } from './lib/types.js';

type Runner = (settings: BenchSettings) => Promise<BenchResult>;

const BENCHMARKS: Record<string, () => Promise<Runner>> = {
  verify: async () => (await import('./verify/run-verify.js')).runVerify,
  receiver: async () => (await import('./receiver/run-receiver.js')).runReceiver,
  http: async () => (await import('./http/run-http.js')).runHttp,
  ack: async () => (await import('./ack/run-ack.js')).runAck,
  memory: async () => (await import('./ack/run-memory.js')).runMemory,
  batcher: async () => (await import('./batcher/run-batcher.js')).runBatcher,
  next: async () => (await import('./next/run-next.js')).runNext,
  redis: async () => (await import('./redis/run-redis.js')).runRedis,
  postgres: async () => (await import('./postgres/run-postgres.js')).runPostgres,
  drain: async () => (await import('./drain/run-drain.js')).runDrain,
  takeover: async () => (await import('./takeover/run-takeover.js')).runTakeover,
  invocation: async () => (await import('./invocation/run-invocation.js')).runInvocation,
  bundle: async () => (await import('./bundle/run-bundle.js')).runBundle,
  'verify-runtimes': async () => {
    const { runVerifyRuntimes, parseRuntimes } = await import('./verify/run-verify-runtimes.js');
    const runtimes = parseRuntimes(runtimeArgs);
    return (settings) => runVerifyRuntimes(settings, runtimes);
  },
};

/** `--runtime=workerd,bun` (or `--runtime workerd`): `verify` then measures inside those runtimes. */
const runtimeArgs: string[] = [];

/** The benchmarks that measure a before twin of their cases under `--before`. */
const BEFORE_AWARE: ReadonlySet<string> = new Set(['receiver', 'http', 'redis', 'drain']);

function parseArgs(argv: readonly string[]): {
  names: string[];
  settings: BenchSettings;
  before?: string;
} {
  const names: string[] = [];
  let quick = false;
  let only: string | undefined;
  let before: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--quick') quick = true;
    else if (arg.startsWith('--runtime=')) runtimeArgs.push(arg.slice('--runtime='.length));
    else if (arg === '--runtime') runtimeArgs.push(argv[++i] ?? '');
    else if (arg.startsWith('--only=')) only = arg.slice('--only='.length);
    else if (arg.startsWith('--before=')) before = arg.slice('--before='.length);
    else if (arg === '--before') before = argv[++i] ?? '';
    else if (arg in BENCHMARKS) names.push(arg);
    else {
      console.error(`unknown benchmark "${arg}"; known: ${Object.keys(BENCHMARKS).join(', ')}`);
      process.exit(2);
    }
  }
  if (runtimeArgs.length > 0) {
    const at = names.indexOf('verify');
    if (at >= 0) names[at] = 'verify-runtimes';
    else if (!names.includes('verify-runtimes')) names.push('verify-runtimes');
  }
  if (before === '') {
    console.error('--before needs a git ref: --before=HEAD~1');
    process.exit(2);
  }
  return {
    names: names.length > 0 ? names : Object.keys(BENCHMARKS),
    settings: only === undefined ? { quick } : { quick, only },
    ...(before === undefined ? {} : { before }),
  };
}

const { names, settings, before } = parseArgs(process.argv.slice(2).filter((a) => a !== '--'));
if (before !== undefined) {
  // Once for the whole run; the server children find it in CHURN_RISK_BENCH_BEFORE.
  settings.before = prepareBefore(before);
  const ignoring = names.filter((name) => !BEFORE_AWARE.has(name));
  if (ignoring.length > 0) console.error(`--before: ${ignoring.join(', ')} measure no before twin`);
}
const machine = machineInfo();
const resultsDir = new URL('../results/', import.meta.url);
mkdirSync(resultsDir, { recursive: true });

const header = `### Machine\n\n${machineMarkdown(machine)}${settings.quick ? '\n- mode: --quick' : ''}${
  settings.only === undefined ? '' : `\n- only: ${settings.only}`
}${settings.before === undefined ? '' : `\n- before: ${beforeLabel(settings.before)}`}`;
console.log(header);
let failed = false;
for (const name of names) {
  const started = Date.now();
  let result: BenchResult;
  try {
    const runner = await (BENCHMARKS[name] as () => Promise<Runner>)();
    result = await runner(settings);
  } catch (error) {
    failed = true;
    // A missing prerequisite (PostgreSQL, Node 22) is its message alone: it names the fix.
    const prerequisite = error instanceof Error && error.name === 'BenchPrerequisiteError';
    console.error(`benchmark ${name} failed:`, prerequisite ? error.message : error);
    continue;
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  const body = result.skipped !== undefined ? `Skipped: ${result.skipped}` : result.markdown;
  const markdown = `### ${result.title}\n\n${body}\n\n(${seconds} s)`;
  console.log(`\n${markdown}`);
  writeFileSync(new URL(`${name}.md`, resultsDir), `${header}\n\n${markdown}\n`);
  writeFileSync(
    new URL(`${name}.json`, resultsDir),
    `${JSON.stringify({ machine, settings, result }, null, 2)}\n`,
  );
}
process.exit(failed ? 1 : 0);
