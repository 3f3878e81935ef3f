/**
 * The child process of one walk measurement (`measure.ts` spawns it with the `@churn-risk/source`
 * condition, so that the packages' TypeScript sources are what runs). It starts V8's precise
 * coverage before anything else is imported, sets the receiver of one mode up (scenarios.ts), takes
 * and throws away the coverage so far (`Profiler.takePreciseCoverage` resets the counts), sends one
 * delivery, waits until its handler has run and its outcome is written, and takes the coverage
 * again: a source file of `packages/<name>/src/` is on the walk when any function or block of it
 * counted at least one execution in that window. Code that ran at import or at creation counted
 * before the reset, so it is not on the walk.
 *
 * `@opentelemetry/api` is hidden from the process (as when an app has not installed it, the case
 * of the README's walk) unless WALK_OTEL=installed: packages/core's own devDependency would
 * otherwise be found by core's `#otel` loader, a `require` made by `node:module`'s
 * `createRequire`, which the hiding wraps.
 *
 * Argv: `<mode> <variant>`. Env: REDIS_URL (redis), DATABASE_URL (postgres), WALK_OTEL. Prints one
 * line `WALK <json>` on stdout (measure.ts reads it); the receiver's own logs may print others.
 */
import { Session } from 'node:inspector/promises';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

interface CoverageRange {
  count: number;
}
interface FunctionCoverage {
  ranges: CoverageRange[];
}
interface ScriptCoverage {
  url: string;
  functions: FunctionCoverage[];
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCE = /^packages\/[^/]+\/src\/(?!.*node_modules\/).*\.ts$/;

/** A packages' source file's path from the repository root, or undefined for any other script. */
function sourceFile(url: string): string | undefined {
  if (!url.startsWith('file://')) return undefined;
  const path = relative(ROOT, fileURLToPath(url)).split('\\').join('/');
  return SOURCE.test(path) ? path : undefined;
}

const OTEL_API = '@opentelemetry/api';

type RequireFn = NodeJS.Require;

/** `require` without `@opentelemetry/api`: not found by name, and no folder to look in. */
function withoutOtel(require: RequireFn): RequireFn {
  const hidden = (id: string): unknown => {
    if (id === OTEL_API || id.startsWith(`${OTEL_API}/`)) {
      throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
    }
    return require(id);
  };
  const resolveHidden = (id: string, options?: { paths?: string[] }): string => {
    hidden(id); // throws for the API
    return require.resolve(id, options);
  };
  resolveHidden.paths = (id: string): string[] | null =>
    id === OTEL_API || id.startsWith(`${OTEL_API}/`) ? [] : require.resolve.paths(id);
  return Object.assign(hidden, require, { resolve: resolveHidden }) as RequireFn;
}

if (process.env.WALK_OTEL !== 'installed') {
  const builtin = process.getBuiltinModule.bind(process);
  process.getBuiltinModule = ((id: string) => {
    const loaded: unknown = builtin(id);
    if (id !== 'node:module' && id !== 'module') return loaded;
    const module = loaded as typeof import('node:module');
    const createRequire = (from: string | URL): RequireFn =>
      withoutOtel(module.createRequire(from));
    return new Proxy(module, {
      get: (target, key, receiver) =>
        key === 'createRequire' ? createRequire : Reflect.get(target, key, receiver),
    });
  }) as typeof process.getBuiltinModule;
}

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });

/** The coverage since the last take (the take resets every count). */
async function take(): Promise<ScriptCoverage[]> {
  const { result } = (await session.post('Profiler.takePreciseCoverage')) as {
    result: ScriptCoverage[];
  };
  return result;
}

const [mode, variant] = process.argv.slice(2);
const { runScenario } = await import('./scenarios.js');
const loaded = new Set<string>();
/** Notes the source files of `coverage` as loaded (a take lists the scripts with a count). */
function noteLoaded(coverage: ScriptCoverage[]): ScriptCoverage[] {
  for (const script of coverage) {
    const file = sourceFile(script.url);
    if (file !== undefined) loaded.add(file);
  }
  return coverage;
}
const outcome = await runScenario(mode ?? '', variant ?? '', {
  start: async () => {
    noteLoaded(await take());
  },
  stop: async () => noteLoaded(await take()),
});

const ran = new Set<string>();
for (const script of outcome.coverage) {
  const file = sourceFile(script.url);
  if (file === undefined) continue;
  if (script.functions.some((fn) => fn.ranges.some((range) => range.count > 0))) ran.add(file);
}
await session.post('Profiler.stopPreciseCoverage');
session.disconnect();
console.log(
  `WALK ${JSON.stringify({
    mode,
    variant,
    status: outcome.status,
    handlerRuns: outcome.handlerRuns,
    ran: [...ran].sort(),
    loaded: [...loaded].sort(),
  })}`,
);
process.exit(0);
