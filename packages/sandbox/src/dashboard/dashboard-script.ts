import { readFile } from 'node:fs/promises';

/**
 * Where the dashboard's script comes from. Built (`dist/`): `tsup` bundled `browser/main.ts` into
 * `dist/dashboard/main.js` next to the bundled server code, and that one file is served. From source
 * (tests, `pnpm churn-risk`): each `browser/*.ts` is transpiled with TypeScript's `transpileModule`
 * when first asked for and served as an ES module; the browser loads its imports one by one.
 */
const BUNDLE = new URL('./dashboard/main.js', import.meta.url);
const SOURCES = new URL('./browser/', import.meta.url);
const MODULE_NAME = /^[a-z][a-z0-9-]*$/;

const readText = (url: URL): Promise<string | undefined> =>
  readFile(url, 'utf8').catch(() => undefined);

async function transpile(name: string): Promise<string | undefined> {
  const source = await readText(new URL(`${name}.ts`, SOURCES));
  if (source === undefined) return undefined;
  const { default: ts } = await import('typescript');
  return ts.transpileModule(source, {
    fileName: `${name}.ts`,
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ES2022,
      verbatimModuleSyntax: true,
    },
  }).outputText;
}

/**
 * Returns `load(name)`: the JavaScript of the dashboard module `name` (`main`, ...), or `undefined`
 * when there is no such module. Results are cached for the life of the sandbox.
 */
export function createScriptLoader(): (name: string) => Promise<string | undefined> {
  const bundle = readText(BUNDLE);
  const cache = new Map<string, Promise<string | undefined>>();
  return async (name) => {
    if (!MODULE_NAME.test(name)) return undefined;
    const built = await bundle;
    if (built !== undefined) return name === 'main' ? built : undefined;
    let loading = cache.get(name);
    if (!loading) {
      loading = transpile(name);
      cache.set(name, loading);
    }
    return loading;
  };
}
