import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// The packed packages, as a user installs them: `pnpm pack` of packages/* (built first where dist/
// is missing), installed by `file:` tarball into temporary projects. Shared by the packaging tests
// that type-check against them (readme-examples, types-without-node); each packs once per run.

export const run = promisify(execFile);
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** pnpm, as the repository runs it; its store is the offline cache (the npm registry otherwise). */
const PNPM = ['-y', 'pnpm@10'];
const BUFFER = 64 << 20;

/** `bin/tsc` of the TypeScript installed as `name` for `from` (TypeScript 7 exports no `bin/`). */
function tscOf(from: string, name: string): string {
  const manifest = createRequire(from).resolve(`${name}/package.json`);
  return join(dirname(manifest), 'bin', 'tsc');
}

/** The TypeScript compilers every packed declaration is checked with (5.9 and 7, both supported). */
export const COMPILERS = {
  'TypeScript 5.9': tscOf(join(ROOT, 'package.json'), 'typescript'),
  'TypeScript 7': tscOf(join(ROOT, 'test', 'package.json'), 'typescript7'),
} as const;
export type Compiler = keyof typeof COMPILERS;

/** A publishable package of packages/*. */
export interface Published {
  name: string;
  dir: string;
  version: string;
  /** Its entries by the specifier users import (`@churn-risk/core`, `@churn-risk/core/testing`). */
  entries: string[];
}

/**
 * The publishable packages of packages/* that have a README, as they are when the test runs (a
 * package still being written, without its README, is not packed yet).
 */
export function publishedPackages(): Published[] {
  return readdirSync(join(ROOT, 'packages'))
    .map((folder) => join(ROOT, 'packages', folder))
    .filter((dir) => existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'README.md')))
    .map((dir) => {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name: string;
        version: string;
        private?: boolean;
        exports?: Record<string, unknown>;
      };
      return { manifest, dir };
    })
    .filter(({ manifest }) => manifest.private !== true)
    .map(({ manifest, dir }) => ({
      name: manifest.name,
      dir,
      version: manifest.version,
      entries: Object.keys(manifest.exports ?? { '.': null })
        .filter((subpath) => subpath !== './package.json')
        .map((subpath) => `${manifest.name}${subpath.slice(1)}`),
    }));
}

/** The version range the repository itself uses for a third-party package (else `latest`). */
export function rangeInRepository(name: string): string {
  const manifests = [
    join(ROOT, 'package.json'),
    join(ROOT, 'test', 'package.json'),
    ...['packages', 'examples'].flatMap((folder) =>
      readdirSync(join(ROOT, folder)).map((entry) => join(ROOT, folder, entry, 'package.json')),
    ),
  ].filter((path) => existsSync(path));
  for (const path of manifests) {
    const manifest = JSON.parse(readFileSync(path, 'utf8')) as Record<
      string,
      Record<string, string> | undefined
    >;
    for (const field of ['dependencies', 'devDependencies', 'peerDependencies']) {
      const range = manifest[field]?.[name];
      if (range !== undefined && !range.startsWith('workspace:') && !range.startsWith('npm:'))
        return range;
    }
  }
  return 'latest';
}

/**
 * Packs `packages` into `destination` (building first those without a dist/; `pnpm test` builds
 * before vitest) and returns each package's `file:` tarball specifier by name.
 */
export async function pack(
  packages: readonly Published[],
  destination: string,
): Promise<Map<string, string>> {
  mkdirSync(destination, { recursive: true });
  const unbuilt = packages.filter(
    (pkg) =>
      !existsSync(join(pkg.dir, 'dist', 'index.js')) ||
      !existsSync(join(pkg.dir, 'dist', 'index.d.ts')),
  );
  if (unbuilt.length > 0) {
    const filters = unbuilt.flatMap((pkg) => ['--filter', pkg.name]);
    await run('npx', [...PNPM, ...filters, 'build'], { cwd: ROOT, maxBuffer: BUFFER });
  }
  const filters = packages.flatMap((pkg) => ['--filter', pkg.name]);
  await run('npx', [...PNPM, '-r', ...filters, 'pack', '--pack-destination', destination], {
    cwd: ROOT,
    maxBuffer: BUFFER,
  });
  return new Map(
    packages.map((pkg) => [
      pkg.name,
      `file:${join(destination, `${pkg.name.slice(1).replace('/', '-')}-${pkg.version}.tgz`)}`,
    ]),
  );
}

/**
 * Writes a `"type": "module"` project in `dir` with `dependencies` and installs it with pnpm. Every
 * packed package is also the target of the packages' own dependencies on each other (overrides),
 * so nothing of ours comes from the registry.
 */
export async function installProject(
  dir: string,
  dependencies: Record<string, string>,
  tarballs: ReadonlyMap<string, string>,
): Promise<void> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify(
      {
        name: 'packed-packages-project',
        private: true,
        type: 'module',
        dependencies,
        pnpm: { overrides: Object.fromEntries(tarballs) },
      },
      null,
      2,
    ),
  );
  await run(
    'npx',
    [
      ...PNPM,
      'install',
      '--prefer-offline',
      '--ignore-scripts',
      '--config.auto-install-peers=true',
    ],
    { cwd: dir, maxBuffer: BUFFER },
  );
}

/** What one compiler run found: its diagnostics, and the files of the program. */
export interface CheckResult {
  /** Each error as tsc prints it (`file(line,col): error TS...`, continuation lines indented). */
  diagnostics: string[];
  /** The absolute path of every file of the program (`--listFiles`). */
  files: string[];
}

/** Runs `compiler` on `tsconfig` in `dir`; never rejects for a type error. */
export async function typeCheck(
  compiler: Compiler,
  dir: string,
  tsconfig: string,
): Promise<CheckResult> {
  let output: string;
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [COMPILERS[compiler], '-p', tsconfig, '--pretty', 'false', '--listFiles'],
      { cwd: dir, maxBuffer: BUFFER },
    );
    output = `${stdout}${stderr}`;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    output = `${stdout ?? ''}${stderr ?? ''}` || String(error);
  }
  const lines = output.split('\n').filter((line) => line.trim() !== '');
  return {
    diagnostics: lines.filter((line) => !line.startsWith('/')),
    files: lines.filter((line) => line.startsWith('/')),
  };
}
