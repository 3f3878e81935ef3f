/**
 * The packages a benchmark can load from another build (`--before=<git-ref>`, see
 * `lib/before-build.ts`) beside the working tree's: their names, where they live, and how a
 * process (the runner or a server child) imports the "before" build.
 */
import { pathToFileURL } from 'node:url';

/** Package name -> its folder under `packages/`. */
export const PACKAGE_DIRS = {
  '@churn-risk/core': 'core',
  '@churn-risk/express': 'express',
  '@churn-risk/fastify': 'fastify',
  '@churn-risk/koa': 'koa',
  '@churn-risk/hono': 'hono',
  '@churn-risk/next': 'next',
  '@churn-risk/redis': 'redis',
  '@churn-risk/postgres': 'postgres',
} as const;

export type PackageName = keyof typeof PACKAGE_DIRS;

/** The module types, as the working tree declares them (the before build is assumed to match). */
export interface PackageModules {
  '@churn-risk/core': typeof import('@churn-risk/core');
  '@churn-risk/express': typeof import('@churn-risk/express');
  '@churn-risk/fastify': typeof import('@churn-risk/fastify');
  '@churn-risk/koa': typeof import('@churn-risk/koa');
  '@churn-risk/hono': typeof import('@churn-risk/hono');
  '@churn-risk/next': typeof import('@churn-risk/next');
  '@churn-risk/redis': typeof import('@churn-risk/redis');
  '@churn-risk/postgres': typeof import('@churn-risk/postgres');
}

/** A build of the packages at another commit. */
export interface BeforeBuild {
  /** The git ref as given (`HEAD~1`, a branch, a sha). */
  ref: string;
  sha: string;
  /** Its worktree. */
  dir: string;
  /**
   * Package name -> absolute path of its built entry (`packages/core/dist/index.js`...); a
   * package that did not build at that commit is missing (its before twins are left out).
   */
  paths: Partial<Record<PackageName, string>>;
}

/** The environment variable that hands the before build (JSON `BeforeBuild`) to child processes. */
export const BEFORE_ENV = 'CHURN_RISK_BENCH_BEFORE';

/** The before build this process was given (by `prepareBefore` or by its parent), if any. */
export function beforeBuild(): BeforeBuild | undefined {
  const json = process.env[BEFORE_ENV];
  return json === undefined || json === '' ? undefined : (JSON.parse(json) as BeforeBuild);
}

/** "HEAD~1 (0123456789ab)": how reports name the before build. */
export const beforeLabel = (build: BeforeBuild): string =>
  `${build.ref} (${build.sha.slice(0, 12)})`;

/**
 * Imports package `name` from the before build: its built entry, whose own imports (an adapter's
 * `@churn-risk/core`, `bullmq`...) resolve inside the before worktree, so an adapter loaded this
 * way runs on the before core.
 */
export async function importBefore<K extends PackageName>(name: K): Promise<PackageModules[K]> {
  const build = beforeBuild();
  if (build === undefined) {
    throw new Error(`no before build: run with --before=<git-ref> (${BEFORE_ENV} is not set)`);
  }
  const path = build.paths[name];
  if (path === undefined) throw new Error(`${name} did not build at ${beforeLabel(build)}`);
  return (await import(pathToFileURL(path).href)) as PackageModules[K];
}

/** Whether the before build has all these packages (the others did not build at that commit). */
export function beforeHas(build: BeforeBuild | undefined, ...names: PackageName[]): boolean {
  return build !== undefined && names.every((name) => build.paths[name] !== undefined);
}
