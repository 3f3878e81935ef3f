import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Users of the packages never get the project's SPEC (it lives outside this repository), so no
// shipped file may point at it: a rule a user relies on is written out where they read it (the
// package READMEs, docs/). Shipped here means what an npm package holds (its src/ but the test
// files its package.json leaves out, its bin/, its README), the root README and CONTRIBUTING.md, the
// examples a user copies from (all but their tests) and docs/ (the guides the site is built from).

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** `SPEC 20`, `SPEC section 4`, `SPEC sections 9 and 13`, `SPEC.md`, `../shared/`. */
export const CITATION = /SPEC [0-9]|SPEC sections?\b|SPEC\.md|\.\.\/shared\//;

/** Test files no package ships (each package.json's `files` leaves them out). */
const TEST_FILE = /\.(test|test-d|test-util)\.[cm]?[jt]sx?$/;
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.next', '.wrangler', '.turbo', 'coverage']);
const TEXT_FILE = /\.(ts|tsx|mts|cts|js|mjs|cjs|md|json|toml|ya?ml|html|css|sql|txt)$/;

/** Every text file under `dir` (repository-relative), but skipped folders and test files. */
function walk(dir: string, options: { skipTestDirs?: boolean } = {}): string[] {
  const absolute = join(ROOT, dir);
  if (!existsSync(absolute)) return [];
  const found: string[] = [];
  for (const name of readdirSync(absolute)) {
    const path = join(absolute, name);
    if (statSync(path).isDirectory()) {
      if (SKIPPED_DIRS.has(name) || (options.skipTestDirs === true && name === 'test')) continue;
      found.push(...walk(relative(ROOT, path), options));
    } else if (TEXT_FILE.test(name) && !TEST_FILE.test(name)) {
      found.push(relative(ROOT, path));
    }
  }
  return found;
}

/** The folders directly under `dir` (repository-relative). */
function subfolders(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !SKIPPED_DIRS.has(entry.name))
    .map((entry) => join(dir, entry.name));
}

/** The shipped files, as listed in the header comment. */
export function shippedFiles(): string[] {
  const packages = subfolders('packages');
  const examples = subfolders('examples');
  return [
    'README.md',
    'CONTRIBUTING.md',
    ...walk('docs'),
    ...packages.flatMap((dir) => [
      ...walk(join(dir, 'src')),
      ...walk(join(dir, 'bin')),
      join(dir, 'README.md'),
    ]),
    ...examples.flatMap((dir) => walk(dir, { skipTestDirs: true })),
  ].filter((path) => existsSync(join(ROOT, path)));
}

/** `path:line: text` for each line of `path` that cites the SPEC. */
function citations(path: string): string[] {
  return readFileSync(join(ROOT, path), 'utf8')
    .split('\n')
    .flatMap((line, i) => (CITATION.test(line) ? [`${path}:${i + 1}: ${line.trim()}`] : []));
}

describe('shipped files cite no SPEC', () => {
  it('finds the citations it looks for, and not the words around them', () => {
    for (const cited of [
      'the bound of SPEC 13',
      '(SPEC section 4)',
      'SPEC sections 9 and 13',
      '`../shared/SPEC.md`',
      'see ../shared/000.txt',
    ]) {
      expect(CITATION.test(cited), cited).toBe(true);
    }
    for (const plain of ['the spec-18 anchor', 'a SPECIAL case', 'SPECS', 'shared/ state']) {
      expect(CITATION.test(plain), plain).toBe(false);
    }
  });

  it('looks at every package, its READMEs and docs/', () => {
    const files = shippedFiles();
    for (const dir of subfolders('packages')) {
      expect(files, dir).toContain(join(dir, 'README.md'));
      expect(
        files.some((path) => path.startsWith(join(dir, 'src') + '/')),
        dir,
      ).toBe(true);
    }
    expect(files).toContain('README.md');
    expect(files).toContain('CONTRIBUTING.md');
    for (const guide of ['guarantees.md', 'receiving.md', 'writing-a-store.md', 'client.md'])
      expect(files).toContain(join('docs', guide));
    expect(files.some((path) => TEST_FILE.test(path))).toBe(false);
  });

  it('has no "SPEC n", "SPEC section", "SPEC.md" or "../shared/" in a shipped file', () => {
    const found = shippedFiles().flatMap(citations);
    expect(found, 'write the rule itself, not where the SPEC states it').toEqual([]);
  });
});
