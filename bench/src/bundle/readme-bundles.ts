/**
 * The READMEs' main examples bundled as users ship them: the Cloudflare
 * README's worker for workerd (esbuild, wrangler's export conditions `workerd`, `worker`,
 * `browser`) and the Lambda README's handler for Node, both minified. The snippet text is read
 * from the READMEs themselves (their first TypeScript block), and the packages resolve to their
 * built `dist/` as they would from npm. Shared by `pnpm bench bundle` and the size test
 * (test/packaging/bundle-size.test.ts).
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { build, type Metafile, type Platform } from 'esbuild';

/** Most gzip bytes of each bundle (25 KB, read as 25,000 bytes, the stricter reading). */
export const GZIP_BUDGET_BYTES = 25_000;

/** A README whose first TypeScript block (or the first of a section) is bundled. */
export interface ReadmeBundleCase {
  name: 'worker' | 'lambda' | 'lambda-sqs' | 'worker-queue';
  /** The README, relative to the repository root. */
  readme: string;
  /** The heading (`## Queue mode...`) whose first TypeScript block is bundled; default the README's first. */
  section?: string;
  platform: Platform;
  conditions: string[];
  /** Packages left out of the bundle, as the README's bundling says (the runtime ships them). */
  external?: string[];
}

/**
 * The Lambda README's queue-mode handler (`createSqsQueue` and `createQueueReceiver`),
 * with the AWS SDK external as the README bundles it (Lambda's Node runtimes ship it).
 */
export const QUEUE_MODE_CASE: ReadmeBundleCase = {
  name: 'lambda-sqs',
  readme: 'packages/lambda/README.md',
  section: '## Queue mode',
  platform: 'node',
  conditions: [],
  external: ['@aws-sdk/*'],
};

export const CASES: readonly ReadmeBundleCase[] = [
  {
    name: 'worker',
    readme: 'packages/cloudflare/README.md',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
  },
  { name: 'lambda', readme: 'packages/lambda/README.md', platform: 'node', conditions: [] },
  // The README's queue-mode worker (`createQueueWorker`): its receiver is
  // `createQueueReceiver`, so it holds no in-memory queue.
  {
    name: 'worker-queue',
    readme: 'packages/cloudflare/README.md',
    section: '## Queue mode',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
  },
  QUEUE_MODE_CASE,
];

/** A bundled README example: its sizes and what it holds. */
export interface ReadmeBundle {
  name: ReadmeBundleCase['name'];
  /** Bytes of the bundle, not minified. */
  raw: number;
  /** Bytes of the minified bundle. */
  min: number;
  /** Bytes of the minified bundle, gzipped (zlib's default level, as `gzip`). */
  gzip: number;
  /** The minified bundle. */
  code: string;
  /** Minified bytes per package (`@churn-risk/core`, `zod`...), largest first. */
  packages: { name: string; bytes: number }[];
}

/** The repository's root directory. */
export const ROOT = new URL('../../../', import.meta.url);

/** The first fenced TypeScript block of a Markdown file. */
export function firstTypeScriptBlock(markdown: string): string {
  const match = /^```ts\n([\s\S]*?)^```/m.exec(markdown);
  if (match === null) throw new Error('no ```ts block');
  return match[1] ?? '';
}

/**
 * The README's main example (or its section's), as the README shows it. A block whose imports the
 * README keeps in a `<!-- snippet-context ... -->` comment just before it (the snippet test's
 * declarations) gets that context's `import` lines, and the rest (declared functions) stays free.
 */
export function snippetOf(entry: ReadmeBundleCase): string {
  const markdown = readFileSync(new URL(entry.readme, ROOT), 'utf8');
  if (entry.section === undefined) return firstTypeScriptBlock(markdown);
  const start = markdown.indexOf(`\n${entry.section}`);
  if (start < 0) throw new Error(`${entry.readme} has no section "${entry.section}"`);
  const section = markdown.slice(start);
  const block = firstTypeScriptBlock(section);
  const context = /<!-- snippet-context\n([\s\S]*?)-->\s*```ts\n/.exec(section);
  if (context === null || section.indexOf(context[0]) > section.indexOf('```ts')) return block;
  const imports = (context[1] ?? '').split('\n').filter((line) => line.startsWith('import '));
  return `${imports.join('\n')}\n${block}`;
}

/** The package a bundled input belongs to: `zod`, `@churn-risk/core`, or `(snippet)`. */
function packageOf(input: string): string {
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules\/)/.exec(input);
  if (inModules !== null) return inModules[1] ?? input;
  const workspace = /(?:^|\/)packages\/([^/]+)\//.exec(input);
  if (workspace !== null) return `@churn-risk/${workspace[1] ?? ''}`;
  return '(snippet)';
}

function byPackage(metafile: Metafile): { name: string; bytes: number }[] {
  const totals = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const name = packageOf(input);
      totals.set(name, (totals.get(name) ?? 0) + bytesInOutput);
    }
  }
  return [...totals]
    .map(([name, bytes]) => ({ name, bytes }))
    .filter(({ bytes }) => bytes > 0)
    .sort((a, b) => b.bytes - a.bytes);
}

async function bundle(entry: ReadmeBundleCase, minify: boolean, edit: (text: string) => string) {
  const result = await build({
    stdin: {
      contents: edit(snippetOf(entry)),
      loader: 'ts',
      // Resolved from bench/, which depends on the packages: their `dist/`, as from npm.
      resolveDir: new URL('../..', import.meta.url).pathname,
      sourcefile: `${entry.name}.ts`,
    },
    bundle: true,
    format: 'esm',
    platform: entry.platform,
    conditions: entry.conditions,
    external: entry.external ?? [],
    minify,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (output === undefined) throw new Error('esbuild produced no output');
  return { code: output.text, bytes: output.contents.byteLength, metafile: result.metafile };
}

/**
 * Bundles one README example, plain and minified; `edit` changes the snippet first (a test
 * bundles a variant of it).
 */
export async function bundleReadme(
  entry: ReadmeBundleCase,
  edit: (text: string) => string = (text) => text,
): Promise<ReadmeBundle> {
  const raw = await bundle(entry, false, edit);
  const min = await bundle(entry, true, edit);
  return {
    name: entry.name,
    raw: raw.bytes,
    min: min.bytes,
    gzip: gzipSync(min.code).byteLength,
    code: min.code,
    packages: byPackage(min.metafile),
  };
}
