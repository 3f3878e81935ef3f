import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  exampleFileName,
  isInstalled,
  readmeParts,
  userReadmes,
  type ReadmeParts,
} from './readme-parts.js';

// SPEC section 14, as a new user meets it: every README says the packages are ESM, and its first
// TypeScript example type-checks (strict; nodenext, then bundler) in a fresh "type": "module"
// project that installed the packed tarballs plus what the README's install line names.

const run = promisify(execFile);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
/** pnpm, as the repository runs it; its store is the offline cache (the npm registry otherwise). */
const PNPM = ['-y', 'pnpm@10'];
const MODES = {
  nodenext: { module: 'nodenext', moduleResolution: 'nodenext' },
  bundler: { module: 'esnext', moduleResolution: 'bundler' },
} as const;
type Mode = keyof typeof MODES;

const readmes: ReadmeParts[] = userReadmes(ROOT).map((path) => readmeParts(ROOT, path));
const withExamples = readmes.filter((readme) => readme.example !== undefined);

interface Published {
  name: string;
  dir: string;
  version: string;
}

/**
 * The publishable packages of packages/* that have a README, as they are when the test runs (a
 * package still being written, without its README, is not packed yet).
 */
function publishedPackages(): Published[] {
  return readdirSync(join(ROOT, 'packages'))
    .map((folder) => join(ROOT, 'packages', folder))
    .filter((dir) => existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'README.md')))
    .map((dir) => {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name: string;
        version: string;
        private?: boolean;
      };
      return { ...manifest, dir };
    })
    .filter((manifest) => manifest.private !== true)
    .map(({ name, dir, version }) => ({ name, dir, version }));
}

/** The version range the repository itself uses for a third-party package (else `latest`). */
function rangeInRepository(name: string): string {
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

/** One snapshot of packages/, taken with the READMEs' (other work may add a package meanwhile). */
const published = publishedPackages();
let project: string;
const diagnostics: Record<Mode, string> = { nodenext: '', bundler: '' };

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'churn-risk-readmes-'));
  const tarballs = join(project, 'tarballs');
  mkdirSync(tarballs);
  const packages = published;

  // `pnpm test` builds before vitest; a lone run of this file builds what has no dist/ yet.
  const unbuilt = packages.filter(
    (pkg) =>
      !existsSync(join(pkg.dir, 'dist', 'index.js')) ||
      !existsSync(join(pkg.dir, 'dist', 'index.d.ts')),
  );
  if (unbuilt.length > 0) {
    const filters = unbuilt.flatMap((pkg) => ['--filter', pkg.name]);
    await run('npx', [...PNPM, ...filters, 'build'], { cwd: ROOT, maxBuffer: 64 << 20 });
  }
  const filters = packages.flatMap((pkg) => ['--filter', pkg.name]);
  await run('npx', [...PNPM, '-r', ...filters, 'pack', '--pack-destination', tarballs], {
    cwd: ROOT,
    maxBuffer: 64 << 20,
  });
  const tarballOf = (pkg: Published): string =>
    `file:${join(tarballs, `${pkg.name.slice(1).replace('/', '-')}-${pkg.version}.tgz`)}`;

  // One project for every README: the tarballs (also as the target of the packages' own
  // dependencies on each other), the third-party packages the install lines name, @types/node.
  const local = new Map(packages.map((pkg) => [pkg.name, tarballOf(pkg)]));
  const dependencies: Record<string, string> = { '@types/node': rangeInRepository('@types/node') };
  for (const readme of withExamples) {
    for (const name of readme.installed) {
      // Never from the registry: our packages come from this checkout's tarballs only.
      if (name.startsWith('@churn-risk/') && !local.has(name))
        throw new Error(`${readme.path} installs ${name}, which packages/ does not publish`);
      dependencies[name] = local.get(name) ?? rangeInRepository(name);
    }
  }
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify(
      {
        name: 'readme-examples',
        private: true,
        type: 'module',
        dependencies,
        pnpm: { overrides: Object.fromEntries(local) },
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
    { cwd: project, maxBuffer: 64 << 20 },
  );

  const files: string[] = [];
  for (const readme of withExamples) {
    const file = exampleFileName(readme.path);
    writeFileSync(join(project, file), `${readme.example ?? ''}\nexport {};\n`);
    files.push(file);
  }
  await Promise.all(
    (Object.keys(MODES) as Mode[]).map(async (mode) => {
      const tsconfig = `tsconfig.${mode}.json`;
      const compilerOptions = {
        ...MODES[mode],
        target: 'es2022',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
      };
      writeFileSync(join(project, tsconfig), JSON.stringify({ compilerOptions, files }, null, 2));
      try {
        await run(process.execPath, [TSC, '-p', tsconfig, '--pretty', 'false'], {
          cwd: project,
          maxBuffer: 64 << 20,
        });
      } catch (error) {
        const { stdout, stderr } = error as { stdout?: string; stderr?: string };
        diagnostics[mode] = `${stdout ?? ''}${stderr ?? ''}` || String(error);
      }
    }),
  );
}, 600_000);

afterAll(() => {
  if (project !== undefined) rmSync(project, { recursive: true, force: true });
});

describe('every README a new user reads', () => {
  it('is found: the root, each package and each example', () => {
    const paths = readmes.map((readme) => readme.path);
    for (const path of ['README.md', 'packages/core/README.md', 'examples/express/README.md'])
      expect(paths).toContain(path);
    for (const pkg of published) {
      expect(paths).toContain(`packages/${pkg.dir.split('/').at(-1) ?? ''}/README.md`);
    }
  });

  it.each(readmes.map((readme) => [readme.path, readme] as const))(
    '%s says the packages are ESM, shows "type": "module" and that require() works on Node >= 20.19',
    (_path, readme) => {
      expect(readme.text, readme.path).toMatch(/\bESM\b/);
      expect(readme.text, readme.path).toContain('"type": "module"');
      expect(readme.text, readme.path).toMatch(/`require\(\)`[^.]*Node >= 20\.19/);
    },
  );

  it.each(withExamples.map((readme) => [readme.path, readme] as const))(
    '%s: its install line names every package its first example imports',
    (_path, readme) => {
      expect(readme.installed, `${readme.path} has no npm install line`).not.toEqual([]);
      const missing = readme.imported.filter((name) => !isInstalled(name, readme.installed));
      expect(missing, `${readme.path}: imported but not in its install line`).toEqual([]);
    },
  );
});

describe('the first TypeScript example of each README type-checks against the packed packages', () => {
  it.each(
    (Object.keys(MODES) as Mode[]).flatMap((mode) =>
      withExamples.map((readme) => [readme.path, mode, exampleFileName(readme.path)] as const),
    ),
  )('%s, strict, %s', (path, mode, file) => {
    const errors = diagnostics[mode]
      .split('\n')
      .filter((line) => line.startsWith(`${file}(`) || line.startsWith(`${file}:`));
    expect(errors, `${path} (${file}) does not type-check under ${mode}`).toEqual([]);
    // A failure of tsc itself (not an error in one of the files) fails every README.
    const unattributed = diagnostics[mode]
      .split('\n')
      .filter((line) => line.trim() !== '' && !/^\S+\.ts[(:]/.test(line) && !/^\s/.test(line));
    expect(unattributed, `tsc under ${mode}`).toEqual([]);
  });
});

describe('the CLI of the packed sandbox, through its scoped name', () => {
  // npm picks a package's only bin (or the bin named like the package without its scope), so
  // `npx @churn-risk/sandbox <command>` runs `churn-risk <command>`: no unscoped name involved.
  it.each([
    [['@churn-risk/sandbox', '--help'], /^Usage: churn-risk <command>/],
    [
      ['-p', '@churn-risk/sandbox', 'churn-risk', 'trigger', '--help'],
      /^Usage: churn-risk trigger/,
    ],
  ])('npx --offline %j', async (args, usage) => {
    const { stdout } = await run('npx', ['--offline', ...args], { cwd: project });
    expect(stdout).toMatch(usage);
  });
});
