import { builtinModules } from 'node:module';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** One TypeScript block of a README. */
export interface Snippet {
  /** 1-based, among the README's TypeScript blocks. */
  index: number;
  code: string;
  /**
   * The file it stands for, when its first line names one (`// src/worker.ts`, `// app/api/x/route.ts:
   * ...`): other snippets of the README import it by that path. `undefined` otherwise.
   */
  file: string | undefined;
  /** Marked deliberately partial: ```ts skip-check (the test lists these). */
  skipped: boolean;
  /**
   * What the snippet takes from its surroundings (the imports and values of an earlier snippet),
   * for the type check only: an HTML comment right before the fence, invisible on the rendered
   * page, `<!-- snippet-context` then code, then `-->`. Empty when there is none.
   */
  context: string;
}

/** What a README gives a new user: its install line(s) and its main example. */
export interface ReadmeParts {
  /** The README's path, relative to the repository root (`packages/express/README.md`). */
  path: string;
  text: string;
  /** The packages the first `npm install` block names (flags and versions dropped). */
  installed: string[];
  /** The first TypeScript block, `undefined` when there is none. */
  example: string | undefined;
  /** The packages the main example imports (no Node built-ins, no relative paths). */
  imported: string[];
  /** Every TypeScript block, in order. */
  snippets: Snippet[];
}

const FENCE = /^```([a-z]*)([^\n]*)\n([\s\S]*?)^```/gm;
const TYPESCRIPT = new Set(['ts', 'typescript', 'tsx']);
/** A first line that names the snippet's file: `// src/worker.ts`, `// app/route.ts: ...`. */
const FILE_COMMENT = /^\/\/ ((?:[\w.@[\]-]+\/)*[\w.@[\]-]+\.tsx?)(?:[:,]|\s|$)/;
const BUILTINS = new Set(builtinModules);

/** The README.md files a new user reads: the root, each package and each example. */
export function userReadmes(root: string): string[] {
  const found = [join(root, 'README.md')];
  for (const folder of ['packages', 'examples']) {
    for (const name of readdirSync(join(root, folder)).sort()) {
      const path = join(root, folder, name, 'README.md');
      if (existsSync(path)) found.push(path);
    }
  }
  return found;
}

/** The guides a user reads beside the READMEs: every Markdown file of docs/ (not the built site). */
export function guides(root: string): string[] {
  return readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => join(root, 'docs', name));
}

/** An HTML comment `<!-- snippet-context ... -->` that ends right before a fence. */
const CONTEXT = /<!--\s*snippet-context\s*\n((?:(?!-->)[\s\S])*)-->\s*$/;

/** The fenced blocks of `markdown`: language, the rest of the info string, code, context. */
function blocks(markdown: string): { lang: string; info: string; code: string; context: string }[] {
  return [...markdown.matchAll(FENCE)].map((match) => ({
    lang: match[1] ?? '',
    info: (match[2] ?? '').trim(),
    code: match[3] ?? '',
    context: CONTEXT.exec(markdown.slice(Math.max(0, match.index - 4000), match.index))?.[1] ?? '',
  }));
}

/** `@scope/name` or `name` of a bare import specifier; `undefined` for a built-in or a path. */
export function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:'))
    return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? '');
  return BUILTINS.has(name) ? undefined : name;
}

/** Every package a TypeScript snippet imports (static, side-effect, dynamic and re-exports). */
export function importedPackages(code: string): string[] {
  const specifiers = [
    ...code.matchAll(/^\s*(?:import|export)\s[^'"]*?\sfrom\s+['"]([^'"]+)['"]/gm),
    ...code.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm),
    ...code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((match) => match[1] ?? '');
  const names = specifiers.map(packageOf).filter((name) => name !== undefined);
  return [...new Set(names)].sort();
}

/** The package named by an install argument: `express@^5` -> `express`, `@a/b@1` -> `@a/b`. */
function withoutVersion(argument: string): string {
  const at = argument.indexOf('@', 1);
  return at === -1 ? argument : argument.slice(0, at);
}

/** The packages of every `npm install` / `npm i` / `npm add` command in a shell block. */
export function installArguments(shell: string): string[] {
  const lines = shell
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, ''));
  const names: string[] = [];
  for (const line of lines) {
    for (const command of line.split(/&&|;/)) {
      const words = command.trim().split(/\s+/);
      if (words[0] !== 'npm' || !['install', 'i', 'add'].includes(words[1] ?? '')) continue;
      for (const word of words.slice(2))
        if (!word.startsWith('-')) names.push(withoutVersion(word));
    }
  }
  return names;
}

/** Reads one README: its first `npm install` block and its first TypeScript block. */
export function readmeParts(root: string, path: string): ReadmeParts {
  const text = readFileSync(path, 'utf8');
  const all = blocks(text);
  const shell = all.find(
    ({ lang, code }) =>
      ['sh', 'bash', 'shell', 'console'].includes(lang) && /\bnpm (install|i|add)\b/.test(code),
  );
  const snippets = all
    .filter(({ lang }) => TYPESCRIPT.has(lang))
    .map(({ info, code, context }, index) => ({
      index: index + 1,
      code,
      context,
      file: FILE_COMMENT.exec(code)?.[1],
      skipped: info.split(/\s+/).includes('skip-check'),
    }));
  const example = snippets[0]?.code;
  return {
    path: relative(root, path),
    text,
    installed: shell === undefined ? [] : installArguments(shell.code),
    example,
    imported: example === undefined ? [] : importedPackages(example),
    snippets,
  };
}

/** True when `installed` names `name`, or its DefinitelyTyped package for a types-only import. */
export function isInstalled(name: string, installed: readonly string[]): boolean {
  const typesName = name.startsWith('@')
    ? `@types/${name.slice(1).replace('/', '__')}`
    : `@types/${name}`;
  return installed.includes(name) || installed.includes(typesName);
}

/** A file name for a README's example: `packages/express/README.md` -> `packages-express.ts`. */
export function exampleFileName(readmePath: string): string {
  const folder = readmePath.replace(/(^|\/)README\.md$/, '');
  return `${folder === '' ? 'root' : folder.replace(/[^a-z0-9]+/gi, '-')}.ts`;
}
