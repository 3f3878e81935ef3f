import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// No import cycle in core's sources, type-only imports included (the last one ran
// handler-registration.ts -> types.ts -> handler-registration.ts).

const SRC = dirname(fileURLToPath(import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.ts$/.test(entry.name) && !/\.test(-d)?\.ts$|\.test-util\.ts$/.test(entry.name)
      ? [path]
      : [];
  });
}

/** The relative imports (and re-exports) of a file, resolved to source paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/g)) {
    found.push(resolve(dirname(file), (match[1] as string).replace(/\.js$/, '.ts')));
  }
  return found;
}

function cycles(files: readonly string[]): string[][] {
  const graph = new Map(files.map((file) => [file, importsOf(file)]));
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next) && graph.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return found.map((cycle) => cycle.map((file) => relative(SRC, file)));
}

describe("core's import graph", () => {
  it('has no cycle, type-only imports included', () => {
    expect(cycles(sources(SRC))).toEqual([]);
  });

  it('finds a cycle where there is one (the check can fail)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cycles-'));
    try {
      writeFileSync(join(dir, 'a.ts'), "import type { B } from './b.js';\nexport type A = B;\n");
      writeFileSync(join(dir, 'b.ts'), "export type { A as B } from './a.js';\n");
      writeFileSync(join(dir, 'c.ts'), "import type { A } from './a.js';\nexport type C = A;\n");
      const found = cycles(['a.ts', 'b.ts', 'c.ts'].map((name) => join(dir, name)));
      expect(found).toHaveLength(1);
      expect(found[0]?.map((file) => file.split('/').pop())).toEqual(['a.ts', 'b.ts', 'a.ts']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
