/**
 * Runs the benchmarks: `pnpm bench` (all), `pnpm bench verify http` (some), `--quick` (short runs,
 * a check that everything works), `--only=fastify` (only the cases whose name contains the text). Prints Markdown and writes bench/results/<name>.{md,json}.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { machineInfo, machineMarkdown } from './lib/machine.js';
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
  'verify-runtimes': async () => {
    const { runVerifyRuntimes, parseRuntimes } = await import('./verify/run-verify-runtimes.js');
    const runtimes = parseRuntimes(runtimeArgs);
    return (settings) => runVerifyRuntimes(settings, runtimes);
  },
};

/** `--runtime=workerd,bun` (or `--runtime workerd`): `verify` then measures inside those runtimes. */
const runtimeArgs: string[] = [];

function parseArgs(argv: readonly string[]): { names: string[]; settings: BenchSettings } {
  const names: string[] = [];
  let quick = false;
  let only: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--quick') quick = true;
    else if (arg.startsWith('--runtime=')) runtimeArgs.push(arg.slice('--runtime='.length));
    else if (arg === '--runtime') runtimeArgs.push(argv[++i] ?? '');
    else if (arg.startsWith('--only=')) only = arg.slice('--only='.length);
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
  return {
    names: names.length > 0 ? names : Object.keys(BENCHMARKS),
    settings: only === undefined ? { quick } : { quick, only },
  };
}

const { names, settings } = parseArgs(process.argv.slice(2).filter((a) => a !== '--'));
const machine = machineInfo();
const resultsDir = new URL('../results/', import.meta.url);
mkdirSync(resultsDir, { recursive: true });

const header = `### Machine\n\n${machineMarkdown(machine)}${settings.quick ? '\n- mode: --quick' : ''}${
  settings.only === undefined ? '' : `\n- only: ${settings.only}`
}`;
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
    console.error(`benchmark ${name} failed:`, error);
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
