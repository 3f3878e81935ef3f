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

/** Whether `a` and `b` are at most one edit apart (one letter added, removed or changed). */
function oneEditApart(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  let i = 0;
  while (i < short.length && short[i] === long[i]) i++;
  const rest = short.length === long.length ? i + 1 : i; // a change, or an addition in `long`
  return short.slice(rest) === long.slice(i + 1);
}

/** The pairs of names of one export list that are at most one edit apart. */
function lookalikes(list: readonly string[]): string[] {
  const names = [...new Set(list.map((entry) => entry.slice(entry.indexOf(' ') + 1)))];
  const pairs: string[] = [];
  for (const [i, a] of names.entries()) {
    for (const b of names.slice(i + 1)) if (oneEditApart(a, b)) pairs.push(`${a} ~ ${b}`);
  }
  return pairs;
}

/** What applications read too (`queue.failed()`): in the main entry as well. */
const IN_BOTH = new Set(['type AlertRecord']);

/** The names an alert on its way had before it had one record type (`AlertRecord<Stage>`). */
const RETIRED_RECORD_NAMES = [
  'QueuedAlert',
  'AcceptedAlert',
  'StoredAlert',
  'StoredTry',
  'DeliveredAlert',
  'FailedAlert',
  'Taken',
  'HeldLease',
];

/** The most names core's main entry may export: what an application imports, and no more. */
const MAIN_ENTRY_MAX = 80;

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

  it('tells lookalike names apart, and has none: no two names of an entry one edit apart', () => {
    expect(lookalikes(['value HandlerFailedError', 'value HandlersFailedError'])).toEqual([
      'HandlerFailedError ~ HandlersFailedError',
    ]);
    expect(lookalikes(['type QueueCounts', 'type QueueCount', 'type QueueCountz'])).toHaveLength(3);
    expect(lookalikes(['value createQueue', 'type createQueue', 'value CreateQueue'])).toEqual([
      'createQueue ~ CreateQueue', // case-sensitive: one letter changed
    ]);
    expect(lookalikes(['value isOpsError', 'value OpsError', 'type FailedAlert'])).toEqual([]);
    const found = [...ENTRIES].flatMap(([name, file]) =>
      lookalikes(exportsOf(file)).map((pair) => `${name}: ${pair}`),
    );
    expect(found).toEqual([]);
  });

  it(`keeps core's main entry at most ${String(MAIN_ENTRY_MAX)} names`, () => {
    expect(exportsOf(ENTRIES.get('@churn-risk/core') as string).length).toBeLessThanOrEqual(
      MAIN_ENTRY_MAX,
    );
  });

  it("keeps what a back end, an adapter, a test or a wire tool imports out of core's main entry", () => {
    const main = new Set(exportsOf(ENTRIES.get('@churn-risk/core') as string));
    for (const entry of [
      '@churn-risk/core/store',
      '@churn-risk/core/adapter',
      '@churn-risk/core/wire',
      '@churn-risk/core/testing',
    ]) {
      const names = exportsOf(ENTRIES.get(entry) as string);
      expect(names.length).toBeGreaterThan(0);
      expect(names.filter((n) => main.has(n) && !IN_BOTH.has(n))).toEqual([]);
    }
  });

  it('names an alert on its way once: AlertRecord, with its stage as the type parameter', () => {
    const everywhere = [...ENTRIES].flatMap(([name, file]) =>
      exportsOf(file).map((exported) => `${name}: ${exported}`),
    );
    const retired = RETIRED_RECORD_NAMES.flatMap((old) =>
      everywhere.filter((line) => line.endsWith(` ${old}`)),
    );
    expect(retired).toEqual([]);
    for (const entry of ['@churn-risk/core', '@churn-risk/core/store']) {
      expect(exportsOf(ENTRIES.get(entry) as string)).toContain('type AlertRecord');
    }
  });
});
