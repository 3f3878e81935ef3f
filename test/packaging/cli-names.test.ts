import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../packages/sandbox/src/cli/run-cli.js';

// CLI names cannot be squatted. `churn-risk` (and any `churn-risk-*`) is not a
// package on the registry, so `npx churn-risk ...` would download and run whatever someone
// publishes under that name. Documented commands go through the scoped packages.

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SKIPPED = new Set(['node_modules', '.git', 'dist', '.next', 'artifacts', 'coverage']);

/** Every README.md of the repository, node_modules and build output excluded. */
function readmes(dir = ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : readmes(join(dir, entry.name));
    return entry.name === 'README.md' ? [join(dir, entry.name)] : [];
  });
}

/** The guides of docs/ and CONTRIBUTING.md, which hold commands as the READMEs do. */
function guides(): string[] {
  const docs = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md'));
  return [...docs.map((name) => join(ROOT, 'docs', name)), join(ROOT, 'CONTRIBUTING.md')];
}

/** The package a command line hands to `npx` (or `npm exec`), or `undefined` for none. */
function npxPackages(line: string): string[] {
  const found: string[] = [];
  for (const match of line.matchAll(/\b(?:npx|npm\s+exec|npm\s+x)\s+([^`'"|;&]*)/g)) {
    const words = (match[1] ?? '').trim().split(/\s+/);
    let named = false;
    for (let i = 0; i < words.length; i += 1) {
      const word = words[i] ?? '';
      const packageFlag = /^(?:-p|--package)(?:=(.*))?$/.exec(word);
      if (packageFlag) {
        const value = packageFlag[1] ?? words[(i += 1)] ?? '';
        found.push(value);
        named = true;
      } else if (word === '--') {
        continue;
      } else if (!word.startsWith('-')) {
        if (!named) found.push(word); // the command is the package
        break;
      }
    }
  }
  return found;
}

/** True for `churn-risk`, `churn-risk-redis`, `churn-risk@1`: unscoped names of ours. */
const isUnscoped = (name: string): boolean => /^churn-risk(?:-[a-z]+)*(?:@.*)?$/.test(name);

function unscopedLines(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => npxPackages(line).some(isUnscoped))
    .map((line) => line.trim());
}

describe('no documented command runs an unscoped churn-risk package through npx', () => {
  it('recognises the unscoped forms and lets the scoped ones through', () => {
    expect(unscopedLines('run `npx churn-risk sandbox`')).toHaveLength(1);
    expect(unscopedLines('npx -y churn-risk trigger --url x')).toHaveLength(1);
    expect(unscopedLines('npx -p churn-risk churn-risk sandbox')).toHaveLength(1);
    expect(
      unscopedLines('npx --package=churn-risk-redis churn-risk-redis failed list'),
    ).toHaveLength(1);
    expect(unscopedLines('npm exec churn-risk -- sandbox')).toHaveLength(1);
    expect(unscopedLines('npx @churn-risk/sandbox sandbox --port 4010')).toEqual([]);
    expect(unscopedLines('npx -p @churn-risk/sandbox churn-risk sandbox')).toEqual([]);
    expect(unscopedLines('npx -y pnpm@10 -s churn-risk trigger --url x')).toEqual([]);
  });

  const files = [...readmes(), ...guides()];
  it('finds the READMEs and the guides', () => {
    expect(files.map((file) => relative(ROOT, file))).toEqual(
      expect.arrayContaining([
        'README.md',
        'packages/sandbox/README.md',
        'test/README.md',
        'docs/redis.md',
        'CONTRIBUTING.md',
      ]),
    );
  });

  it.each(files.map((file) => [relative(ROOT, file), file]))('%s', (_name, file) => {
    expect(unscopedLines(readFileSync(file, 'utf8'))).toEqual([]);
  });

  it('in the --help of the churn-risk command and of each of its commands', async () => {
    const help = async (args: string[]): Promise<string> => {
      let text = '';
      const io = {
        out: (chunk: string) => void (text += chunk),
        err: (chunk: string) => void (text += chunk),
      };
      await runCli(args, io);
      return text;
    };
    const top = await help(['--help']);
    const commands = [...top.matchAll(/^ {2}([a-z][a-z-]*) {2,}/gm)].map((match) => match[1] ?? '');
    expect(commands).toEqual(
      expect.arrayContaining(['sandbox', 'trigger', 'deliveries', 'replay', 'test-alert']),
    );
    expect(top).toContain('npx @churn-risk/sandbox <command>');
    for (const text of [
      top,
      ...(await Promise.all(commands.map((name) => help([name, '--help'])))),
    ]) {
      expect(text).toMatch(/^Usage: churn-risk/);
      expect(unscopedLines(text)).toEqual([]);
    }
  });
});
