/**
 * The benchmarks' anchors that need Node 22 (graphile-worker 0.18: Node >= 22.18; pg-boss 12:
 * Node >= 22.12) live outside the workspace, in `bench/node22/` (its own package.json and
 * package-lock.json), so that the repository installs on Node 20 with no engine warning. The
 * benchmark installs that folder on first use (`npm ci --prefix bench/node22`, npm run by the Node
 * 22 binary so that npm checks the engines against Node 22) and runs the processes that load
 * those libraries on `test/node_modules/node22/bin/node` (the npm package node@22 that the
 * workspace installs).
 *
 * The anchors' TypeScript never imports those packages by name (typecheck and lint run where
 * `bench/node22/` is not installed): `importNode22Package` loads them by path, and each caller
 * declares the few documented functions it calls.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './child.js';
import { BenchPrerequisiteError } from './prerequisite-error.js';

/** The folder of the Node-22-only anchors. */
export const NODE22_DIR = join(REPO_ROOT, 'bench', 'node22');
/** The npm package node@22 of `test/package.json` (node 22.23 from the registry). */
export const NODE22_BINARY = join(REPO_ROOT, 'test', 'node_modules', 'node22', 'bin', 'node');

/** The packages of bench/node22/package.json. */
export type Node22Package = 'graphile-worker' | 'pg-boss';

/** Whether `version` (`22.18.0`) is at least `major.minor`. */
export function atLeast(version: string, major: number, minor: number): boolean {
  const [ma = 0, mi = 0] = version.split('.').map(Number);
  return ma > major || (ma === major && mi >= minor);
}

/**
 * The Node binary of the anchor processes: `BENCH_NODE22` when set, else the workspace's node@22.
 * Throws a `BenchPrerequisiteError` naming the fix when it is missing.
 */
export function node22Binary(env: Record<string, string | undefined> = process.env): string {
  const chosen = env.BENCH_NODE22;
  const binary = chosen === undefined || chosen === '' ? NODE22_BINARY : chosen;
  if (!existsSync(binary)) {
    throw new BenchPrerequisiteError(
      `The anchors of this benchmark (graphile-worker, pg-boss) need Node >= 22.18, and ${binary} ` +
        'is missing: run `npx -y pnpm@10 install --frozen-lockfile` at the repository root (it ' +
        'installs node@22 into test/node_modules), or set BENCH_NODE22 to a Node >= 22.18 binary.',
    );
  }
  return binary;
}

/** npm's own entry (`npm-cli.js`) beside `node` on PATH, run by another Node; undefined if not found. */
function npmCli(): string | undefined {
  try {
    const npm = execFileSync('sh', ['-c', 'readlink -f "$(command -v npm)"'], {
      encoding: 'utf8',
    }).trim();
    const cli = join(dirname(npm), 'npm-cli.js');
    return existsSync(cli) ? cli : undefined;
  } catch {
    return undefined;
  }
}

/** Whether bench/node22/node_modules holds what package-lock.json names (npm's hidden lockfile). */
function installed(): boolean {
  const hidden = join(NODE22_DIR, 'node_modules', '.package-lock.json');
  if (!existsSync(hidden)) return false;
  const want = JSON.parse(readFileSync(join(NODE22_DIR, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string }>;
  };
  const have = JSON.parse(readFileSync(hidden, 'utf8')) as {
    packages: Record<string, { version?: string }>;
  };
  return Object.entries(want.packages).every(
    ([path, entry]) => path === '' || have.packages[path]?.version === entry.version,
  );
}

/**
 * Makes sure bench/node22 is installed (`npm ci --prefix bench/node22` the first time, or when
 * its lockfile changed) and returns the Node 22 binary that runs its packages.
 */
export function prepareNode22(): string {
  const node = node22Binary();
  if (installed()) return node;
  console.error('bench: installing bench/node22 (graphile-worker, pg-boss) with npm ci');
  const cli = npmCli();
  const [command, args] =
    cli === undefined
      ? ['npm', ['ci', '--prefix', NODE22_DIR, '--no-audit', '--no-fund']]
      : [node, [cli, 'ci', '--prefix', NODE22_DIR, '--no-audit', '--no-fund']];
  try {
    execFileSync(command, args, { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new BenchPrerequisiteError(
      `npm ci --prefix bench/node22 failed (${message}); it needs the npm registry once.`,
    );
  }
  return node;
}

/** Loads a package of bench/node22 (in a process on Node 22: see `prepareNode22`). */
export async function importNode22Package(name: Node22Package): Promise<unknown> {
  if (!atLeast(process.versions.node, 22, 12)) {
    throw new Error(`${name} runs on Node 22 here, and this is Node ${process.versions.node}`);
  }
  const require = createRequire(join(NODE22_DIR, 'package.json'));
  let path: string;
  try {
    path = require.resolve(name);
  } catch {
    throw new Error(`${name} is not installed in bench/node22: run npm ci --prefix bench/node22`);
  }
  return import(pathToFileURL(path).href);
}
