import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Every name each package entry exports, values and types alike, as a snapshot: adding, removing
// or renaming a public name is then a change a reviewer sees in the diff. Read from the entries'
// sources (the `@churn-risk/source` condition of each `exports` subpath) with the TypeScript
// checker, so that `export *` and re-exports count as a user sees them.

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The source file of each public entry: `@churn-risk/core/store` -> packages/core/src/store.ts. */
function entries(): Map<string, string> {
  const found = new Map<string, string>();
  for (const dir of readdirSync(join(ROOT, 'packages')).sort()) {
    const manifest = JSON.parse(
      readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8'),
    ) as { name: string; exports?: Record<string, unknown> };
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      const source = (target as Record<string, unknown> | string)['@churn-risk/source' as never];
      if (typeof source !== 'string') continue;
      const name = subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`;
      found.set(name, join(ROOT, 'packages', dir, source));
    }
  }
  return found;
}

const ENTRIES = entries();
const program = ts.createProgram([...ENTRIES.values()], {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  jsx: ts.JsxEmit.ReactJSX,
  customConditions: ['@churn-risk/source'],
});
const checker = program.getTypeChecker();

/** `value name` or `type name` for each export of `file`, sorted. */
function exportsOf(file: string): string[] {
  const source = program.getSourceFile(file);
  if (source === undefined) throw new Error(`${file} is not in the program`);
  const module = checker.getSymbolAtLocation(source);
  if (module === undefined) return [];
  return checker
    .getExportsOfModule(module)
    .map((symbol) => {
      const target =
        (symbol.flags & ts.SymbolFlags.Alias) !== 0 ? checker.getAliasedSymbol(symbol) : symbol;
      return `${(target.flags & ts.SymbolFlags.Value) !== 0 ? 'value' : 'type'} ${symbol.name}`;
    })
    .sort();
}

describe('the export list of every package entry', () => {
  it('finds the entries of every package, core/store and core/adapter among them', () => {
    expect(ENTRIES.size).toBeGreaterThanOrEqual(12);
    for (const name of ['@churn-risk/core', '@churn-risk/core/store', '@churn-risk/core/adapter']) {
      expect(ENTRIES.has(name)).toBe(true);
    }
  });

  for (const [name, file] of ENTRIES) {
    it(name, () => {
      expect(exportsOf(file)).toMatchSnapshot();
    });
  }

  it("keeps what a back end or an adapter imports out of core's main entry", () => {
    const main = new Set(exportsOf(ENTRIES.get('@churn-risk/core') as string));
    for (const entry of ['@churn-risk/core/store', '@churn-risk/core/adapter']) {
      const names = exportsOf(ENTRIES.get(entry) as string);
      expect(names.length).toBeGreaterThan(0);
      // The failed-set records are read by applications too (`queue.failed()`): in both.
      const shared = new Set(['type FailedAlert', 'type FailedListOptions', 'type QueueCounts']);
      shared.add('type QueueHealth');
      expect(names.filter((n) => main.has(n) && !shared.has(n))).toEqual([]);
    }
  });
});
