import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  installProject,
  pack,
  publishedPackages,
  rangeInRepository,
  ROOT,
  run,
  typeCheck,
} from './packed.js';
import {
  exampleFileName,
  importedPackages,
  isInstalled,
  readmeParts,
  guides,
  userReadmes,
  type ReadmeParts,
  type Snippet,
} from './readme-parts.js';

// The READMEs and the guides of docs/, as a new user meets them: every README says the packages are ESM, its
// install line names what its first example imports, and every TypeScript snippet of every README
// and of every guide type-checks (strict; nodenext, then bundler) in a fresh "type": "module" project that installed
// the packed tarballs plus what the READMEs' install lines and snippets name.
//
// Each README's snippets are files of their own folder: a snippet whose first line names a file
// (`// src/worker.ts`) is that file, so that another snippet can import it (`../src/worker.js`);
// any other is `snippet-<n>.ts` at the folder's top. A snippet that continues an earlier one (uses
// its `receiver`, say) states what it takes in an HTML comment right before its fence, invisible on
// the rendered page: `<!-- snippet-context`, code, `-->`; the check prepends it. A snippet that is
// deliberately partial is fenced ```ts skip-check; they are few, and listed in `SKIPPED` below,
// which the test holds to.

const MODES = {
  nodenext: { module: 'nodenext', moduleResolution: 'nodenext' },
  bundler: { module: 'esnext', moduleResolution: 'bundler' },
} as const;
type Mode = keyof typeof MODES;

/** The snippets fenced ```ts skip-check, by README and index, with why each cannot compile. */
const SKIPPED: Record<string, string> = {
  'docs/receiving.md #2':
    'five route files of five frameworks (h3, React Router, SvelteKit, Astro, Vercel) in one block, each typed by its own framework',
};

const readmes: ReadmeParts[] = userReadmes(ROOT).map((path) => readmeParts(ROOT, path));
/** The guides of docs/: their snippets are checked as the READMEs' are. */
const guidePages: ReadmeParts[] = guides(ROOT).map((path) => readmeParts(ROOT, path));
const withExamples = [...readmes, ...guidePages].filter((readme) => readme.example !== undefined);

/** The folder of a README's snippets in the project: `readmes/packages-express/`. */
function folderOf(readme: ReadmeParts): string {
  return `readmes/${exampleFileName(readme.path).replace(/\.ts$/, '')}`;
}

/**
 * The path of each checked snippet in the project: its own file name (a second snippet naming a
 * file already taken, another version of it, goes to its own `snippet-<n>/` folder), else
 * `snippet-<n>.ts`.
 */
function filesOf(readme: ReadmeParts): { snippet: Snippet; file: string }[] {
  const taken = new Set<string>();
  return readme.snippets
    .filter((snippet) => !snippet.skipped)
    .map((snippet) => {
      const n = String(snippet.index);
      const own = snippet.file === undefined || taken.has(snippet.file) ? undefined : snippet.file;
      if (own !== undefined) taken.add(own);
      const name =
        own ?? (snippet.file === undefined ? `snippet-${n}.ts` : `snippet-${n}/${snippet.file}`);
      return { snippet, file: `${folderOf(readme)}/${name}` };
    });
}

/** The guides whose snippets are Next.js route files (checked as packages/next's are). */
const NEXT_GUIDES = new Set(['docs/next.md', 'docs/functions.md']);

/**
 * The resolution modes a snippet is checked in: both, but only `bundler` for Next.js
 * (create-next-app's tsconfig; route files import each other and `next/server` without
 * extensions, which Turbopack needs): packages/next, the examples/next* apps, and another README's
 * Next.js route file (`// app/...`, `// pages/...`).
 */
function modesOf(readme: ReadmeParts, snippet: Snippet): Mode[] {
  const next =
    /(^|\/)next(-[\w-]+)?\//.test(readme.path) ||
    NEXT_GUIDES.has(readme.path) ||
    /^(app|pages)\//.test(snippet.file ?? '');
  return next ? ['bundler'] : ['nodenext', 'bundler'];
}

const checkedSnippets = withExamples.flatMap((readme) =>
  filesOf(readme).map(({ snippet, file }) => ({
    readme,
    snippet,
    file,
    modes: modesOf(readme, snippet),
  })),
);

/** One snapshot of packages/, taken with the READMEs' (other work may add a package meanwhile). */
const published = publishedPackages();
let project: string;
const diagnostics: Record<Mode, string[]> = { nodenext: [], bundler: [] };

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'churn-risk-readmes-'));
  const tarballs = await pack(published, join(project, 'tarballs'));

  // One project for every README: the tarballs, the packages the install lines and the snippets
  // name, @types/node.
  const dependencies: Record<string, string> = { '@types/node': rangeInRepository('@types/node') };
  for (const readme of withExamples) {
    const named = [
      ...readme.installed,
      ...readme.snippets.flatMap((snippet) =>
        snippet.skipped ? [] : importedPackages(`${snippet.context}${snippet.code}`),
      ),
    ];
    for (const name of named) {
      // Never from the registry: our packages come from this checkout's tarballs only.
      if (name.startsWith('@churn-risk/') && !tarballs.has(name))
        throw new Error(`${readme.path} names ${name}, which packages/ does not publish`);
      dependencies[name] = tarballs.get(name) ?? rangeInRepository(name);
    }
  }
  await installProject(project, dependencies, tarballs);

  for (const { snippet, file } of checkedSnippets) {
    mkdirSync(join(project, dirname(file)), { recursive: true });
    // The context first (its imports, then its declarations), then the snippet as it is shown.
    writeFileSync(join(project, file), `${snippet.context}${snippet.code}\nexport {};\n`);
  }
  await Promise.all(
    (Object.keys(MODES) as Mode[]).map(async (mode) => {
      const tsconfig = `tsconfig.${mode}.json`;
      const files = checkedSnippets
        .filter(({ modes }) => modes.includes(mode))
        .map(({ file }) => file);
      const compilerOptions = {
        ...MODES[mode],
        target: 'es2022',
        jsx: 'react-jsx',
        experimentalDecorators: true, // NestJS's parameter decorators
        strict: true,
        noEmit: true,
        skipLibCheck: true,
      };
      writeFileSync(join(project, tsconfig), JSON.stringify({ compilerOptions, files }, null, 2));
      diagnostics[mode] = (await typeCheck('TypeScript 5.9', project, tsconfig)).diagnostics;
    }),
  );
}, 600_000);

afterAll(() => {
  if (project !== undefined) rmSync(project, { recursive: true, force: true });
});

describe('every README a new user reads', () => {
  it('is found: the root, each package and each example; and the guides of docs/', () => {
    expect(guidePages.map((guide) => guide.path)).toEqual(
      expect.arrayContaining(['docs/receiving.md', 'docs/redis.md', 'docs/client.md']),
    );
    const paths = readmes.map((readme) => readme.path);
    for (const path of ['README.md', 'packages/core/README.md', 'examples/express/README.md'])
      expect(paths).toContain(path);
    for (const pkg of published) {
      expect(paths).toContain(`packages/${pkg.dir.split('/').at(-1) ?? ''}/README.md`);
    }
  });

  it('the root README lists every package and every example', () => {
    const root = readmes.find((readme) => readme.path === 'README.md')?.text ?? '';
    for (const pkg of published) expect(root, pkg.name).toContain(`\`${pkg.name}\``);
    for (const folder of readdirSync(join(ROOT, 'examples'))) {
      if (existsSync(join(ROOT, 'examples', folder, 'README.md')))
        expect(root, folder).toContain(`(examples/${folder}/README.md)`);
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

describe('every TypeScript snippet of each README and guide type-checks against the packed packages', () => {
  it('leaves unchecked only the snippets listed as deliberately partial', () => {
    const skipped = withExamples.flatMap((readme) =>
      readme.snippets
        .filter((snippet) => snippet.skipped)
        .map((snippet) => `${readme.path} #${String(snippet.index)}`),
    );
    expect(skipped.sort()).toEqual(Object.keys(SKIPPED).sort());
    expect(checkedSnippets.length).toBeGreaterThan(40);
  });

  it.each(
    (Object.keys(MODES) as Mode[]).flatMap((mode) =>
      checkedSnippets
        .filter(({ modes }) => modes.includes(mode))
        .map(({ readme, snippet, file }) => [readme.path, snippet.index, mode, file] as const),
    ),
  )('%s #%d, strict, %s', (path, _index, mode, file) => {
    const errors = diagnostics[mode].filter((line) => line.startsWith(`${file}(`));
    expect(errors, `${path} (${file}) does not type-check under ${mode}`).toEqual([]);
    // A failure of tsc itself (not an error in one of the files) fails every snippet.
    const unattributed = diagnostics[mode].filter(
      (line) => !/^\S+\.tsx?\(/.test(line) && !/^\s/.test(line),
    );
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
