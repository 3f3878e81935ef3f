/**
 * `--before=<git-ref>`: the packages as they were at that commit, built once into a detached git
 * worktree under /tmp, so that a benchmark can measure them beside the working tree's packages in
 * the same run (see `lib/packages.ts` for how they are loaded).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './child.js';
import { BEFORE_ENV, PACKAGE_DIRS, type BeforeBuild, type PackageName } from './packages.js';

/** Written into the worktree once its install and build succeeded: the next run reuses it. */
const READY_FILE = '.bench-before-ready.json';

/** Runs a command in `cwd`; its output goes to our stderr, as the benchmarks' progress does. */
function run(command: string, args: readonly string[], cwd: string): void {
  execFileSync(command, [...args], { cwd, stdio: ['ignore', 2, 2] });
}

function git(args: readonly string[], cwd = REPO_ROOT): string {
  return execFileSync('git', [...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

/** The built entry (`exports["."].default`, else `dist/index.js`) of a package in `root`. */
function entryOf(root: string, dir: string): string {
  const manifest = JSON.parse(
    readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8'),
  ) as { exports?: Record<string, string | { default?: string } | undefined> };
  const dot = manifest.exports?.['.'];
  const target = (typeof dot === 'string' ? dot : dot?.default) ?? './dist/index.js';
  return join(root, 'packages', dir, target);
}

/**
 * Checks out `ref` (detached) into `/tmp/churn-risk-bench-before-<sha>` (reused when present),
 * installs its dependencies (`pnpm install --frozen-lockfile --prefer-offline`) and builds only the
 * packages the benchmarks load from it. Resolves with the package name -> built entry map, and
 * sets `CHURN_RISK_BENCH_BEFORE` so that the server child processes see it too.
 */
export function prepareBefore(ref: string): BeforeBuild {
  if (process.env.BENCH_FROM_SOURCE === '1') {
    // The before adapters would import the before core's sources and the receivers its build.
    throw new Error('--before measures built packages: unset BENCH_FROM_SOURCE');
  }
  let sha: string;
  try {
    sha = git(['rev-parse', '--verify', '--end-of-options', `${ref}^{commit}`]);
  } catch {
    throw new Error(`--before=${ref}: not a commit in ${REPO_ROOT}`);
  }
  const short = sha.slice(0, 12);
  const dir = `/tmp/churn-risk-bench-before-${short}`;
  const log = (message: string): void => {
    console.error(`before (${ref} = ${short}): ${message}`);
  };

  if (existsSync(dir)) {
    let head = '';
    try {
      head = git(['rev-parse', 'HEAD'], dir);
    } catch {
      // not a git checkout
    }
    if (head !== sha) {
      throw new Error(
        `${dir} exists but is not a checkout of ${sha}; remove it (git worktree remove --force ${dir})`,
      );
    }
    log(`reusing ${dir}`);
  } else {
    git(['worktree', 'prune']); // a worktree of that name deleted by hand is still registered
    log(`git worktree add --detach ${dir}`);
    git(['worktree', 'add', '--detach', dir, sha]);
  }

  const names = Object.keys(PACKAGE_DIRS) as PackageName[];
  const readyPath = join(dir, READY_FILE);
  let built: PackageName[] | undefined;
  let failed: PackageName[] = [];
  if (existsSync(readyPath)) {
    const ready = JSON.parse(readFileSync(readyPath, 'utf8')) as {
      sha?: string;
      built?: PackageName[];
      failed?: PackageName[];
    };
    if (ready.sha === sha) {
      built = ready.built;
      failed = ready.failed ?? [];
    }
  }
  const pnpm = ['-y', 'pnpm@10'];
  /** Builds `which` one at a time (core first: the others import it); a failure costs only its twins. */
  const buildEach = (which: readonly PackageName[], into: PackageName[]): void => {
    for (const name of which) {
      log(`building ${name}`);
      try {
        run('npx', [...pnpm, '-r', '--filter', `./packages/${PACKAGE_DIRS[name]}`, 'build'], dir);
        if (!existsSync(entryOf(dir, PACKAGE_DIRS[name]))) throw new Error('no built entry');
        into.push(name);
      } catch (error) {
        if (name === '@churn-risk/core')
          throw new Error(`${ref}: @churn-risk/core does not build`, { cause: error });
        failed.push(name);
      }
    }
  };
  if (built !== undefined && built.every((name) => existsSync(entryOf(dir, PACKAGE_DIRS[name])))) {
    // A cache made before a package joined PACKAGE_DIRS: build only what it lacks.
    const lacking = names.filter((name) => !built?.includes(name) && !failed.includes(name));
    if (lacking.length > 0) buildEach(lacking, built);
    log(`already installed and built (${built.join(', ')})`);
  } else {
    log('pnpm install --frozen-lockfile --prefer-offline');
    run('npx', [...pnpm, 'install', '--frozen-lockfile', '--prefer-offline'], dir);
    built = [];
    failed = [];
    buildEach(names, built);
  }
  if (failed.length > 0) log(`NOT built (their before twins are left out): ${failed.join(', ')}`);
  writeFileSync(
    readyPath,
    `${JSON.stringify({ sha, ref, built, failed, builtAt: new Date().toISOString() })}\n`,
  );
  const paths: Partial<Record<PackageName, string>> = {};
  for (const name of built) paths[name] = entryOf(dir, PACKAGE_DIRS[name]);

  const build: BeforeBuild = { ref, sha, dir, paths };
  process.env[BEFORE_ENV] = JSON.stringify(build);
  return build;
}
