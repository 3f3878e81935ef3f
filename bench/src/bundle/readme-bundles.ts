/**
 * The READMEs' main examples bundled as users ship them: the Cloudflare
 * README's worker for workerd (esbuild, wrangler's export conditions `workerd`, `worker`,
 * `browser`) and the Lambda README's handler for Node, both minified; and the operations page's
 * Worker (the ops README's). The snippet text is read from the READMEs themselves (their first
 * TypeScript block, or a named one), and the packages resolve to their built `dist/` as they would
 * from npm. Shared by `pnpm bench bundle` and the size test (test/packaging/bundle-size.test.ts).
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { build, type Format, type Metafile, type Platform } from 'esbuild';

/**
 * Most gzip bytes of each bundle: 25 KiB (25,600 bytes), the unit wrangler and esbuild report
 * sizes in, which is how a user checks it.
 */
export const GZIP_BUDGET_BYTES = 25 * 1024;

/** Most gzip bytes of the operations page's Worker: 30 KiB (30,720 bytes). */
export const OPS_GZIP_BUDGET_BYTES = 30 * 1024;

/** A README whose first TypeScript block (or the first of a section) is bundled. */
export interface ReadmeBundleCase {
  name: 'worker' | 'lambda' | 'lambda-sqs' | 'worker-queue' | 'ops-worker';
  /** The README, relative to the repository root. */
  readme: string;
  /** The heading (`## Queue mode...`) whose first TypeScript block is bundled; default the README's first. */
  section?: string;
  /** The first line the bundled block starts with (`// A Worker...`), where it is not the first block. */
  block?: string;
  /** Most gzip bytes of the bundle; default `GZIP_BUDGET_BYTES`. */
  gzipBudget?: number;
  platform: Platform;
  conditions: string[];
  /** Packages left out of the bundle, as the README's bundling says (the runtime ships them). */
  external?: string[];
  /**
   * The README shows the `npx esbuild ...` command of this bundle (in `section`): its flags, not
   * the fields above, say how it is bundled, so that what is measured is what the command gives.
   */
  command?: boolean;
}

/** How the README's `npx esbuild` command bundles: the flags it sets. */
export interface EsbuildCommand {
  /** The command as the README writes it. */
  text: string;
  platform: Platform;
  format: Format;
  target: string | undefined;
  external: string[];
  minify: boolean;
}

/**
 * The Lambda README's queue-mode handler (`createSqsQueue` and `createQueueReceiver`),
 * with the AWS SDK external as the README bundles it (Lambda's Node runtimes ship it).
 */
export const QUEUE_MODE_CASE: ReadmeBundleCase = {
  name: 'lambda-sqs',
  readme: 'docs/lambda.md', // the Lambda guide's "Queue mode" section
  section: '## Queue mode',
  platform: 'node',
  conditions: [],
  external: ['@aws-sdk/*'],
  command: true,
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
    readme: 'docs/cloudflare.md', // the Cloudflare guide's "Queue mode" section
    section: '## Queue mode',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
  },
  QUEUE_MODE_CASE,
];

/**
 * The ops README's Worker (`createOpsHandler` over `createFailedStore`, D1), bundled as the
 * Cloudflare README's worker is. It holds no zod at all: the page validates nothing with a schema.
 */
export const OPS_WORKER_CASE: ReadmeBundleCase = {
  name: 'ops-worker',
  readme: 'docs/ops.md',
  block: '// A Worker',
  platform: 'browser',
  conditions: ['workerd', 'worker', 'browser'],
  gzipBudget: OPS_GZIP_BUDGET_BYTES,
};

/** Every bundle `pnpm bench bundle` measures: the receivers', then the operations page's. */
export const ALL_CASES: readonly ReadmeBundleCase[] = [...CASES, OPS_WORKER_CASE];

/** The most gzip bytes `entry`'s bundle may have. */
export function gzipBudgetOf(entry: ReadmeBundleCase): number {
  return entry.gzipBudget ?? GZIP_BUDGET_BYTES;
}

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

/**
 * The first fenced TypeScript block of a Markdown file, or the first whose text starts with
 * `start`.
 */
export function firstTypeScriptBlock(markdown: string, start?: string): string {
  for (const match of markdown.matchAll(/^```ts\n([\s\S]*?)^```/gm)) {
    const text = match[1] ?? '';
    if (start === undefined || text.startsWith(start)) return text;
  }
  throw new Error(start === undefined ? 'no ```ts block' : `no \`\`\`ts block starting ${start}`);
}

/**
 * The README's main example (or its section's), as the README shows it. A block whose imports the
 * README keeps in a `<!-- snippet-context ... -->` comment just before it (the snippet test's
 * declarations) gets that context's `import` lines, and the rest (declared functions) stays free.
 */
export function snippetOf(entry: ReadmeBundleCase): string {
  const section = sectionOf(entry);
  const block = firstTypeScriptBlock(section, entry.block);
  if (entry.section === undefined) return block;
  const context = /<!-- snippet-context\n([\s\S]*?)-->\s*```ts\n/.exec(section);
  if (context === null || section.indexOf(context[0]) > section.indexOf('```ts')) return block;
  const imports = (context[1] ?? '').split('\n').filter((line) => line.startsWith('import '));
  return `${imports.join('\n')}\n${block}`;
}

/** The README's text from `entry.section` on (the whole README when it names none). */
function sectionOf(entry: ReadmeBundleCase): string {
  const markdown = readFileSync(new URL(entry.readme, ROOT), 'utf8');
  if (entry.section === undefined) return markdown;
  const start = markdown.indexOf(`\n${entry.section}`);
  if (start < 0) throw new Error(`${entry.readme} has no section "${entry.section}"`);
  return markdown.slice(start);
}

/** The words of a shell command line, with single-quoted words unquoted. */
function shellWords(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
}

/**
 * The first `npx esbuild` command of the README's section, read flag by flag; a flag this reader
 * does not know is an error (it could change the size), and so is a command without `--bundle`.
 */
export function esbuildCommandOf(entry: ReadmeBundleCase): EsbuildCommand {
  const text = /^npx esbuild .*$/m.exec(sectionOf(entry))?.[0];
  if (text === undefined) throw new Error(`${entry.readme} shows no npx esbuild command`);
  const command: EsbuildCommand = {
    text,
    platform: 'browser',
    format: 'iife',
    target: undefined,
    external: [],
    minify: false,
  };
  let bundled = false;
  for (const word of shellWords(text).slice(2)) {
    const [flag, value = ''] = word.split(/[=:](.*)/s);
    if (!word.startsWith('--')) continue; // the entry point
    if (word === '--bundle') bundled = true;
    else if (word === '--minify') command.minify = true;
    else if (flag === '--platform') command.platform = value as Platform;
    else if (flag === '--format') command.format = value as Format;
    else if (flag === '--target') command.target = value;
    else if (word.startsWith('--external:')) command.external.push(value);
    else if (flag !== '--outfile') throw new Error(`unknown esbuild flag in the README: ${word}`);
  }
  if (!bundled) throw new Error(`the README's esbuild command does not bundle: ${text}`);
  return command;
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
  // The minified bundle of a README that shows its command is that command's output.
  const command = entry.command === true ? esbuildCommandOf(entry) : undefined;
  const result = await build({
    stdin: {
      contents: edit(snippetOf(entry)),
      loader: 'ts',
      // Resolved from bench/, which depends on the packages: their `dist/`, as from npm.
      resolveDir: new URL('../..', import.meta.url).pathname,
      sourcefile: `${entry.name}.ts`,
    },
    bundle: true,
    format: command?.format ?? 'esm',
    platform: command?.platform ?? entry.platform,
    ...(command?.target === undefined ? {} : { target: command.target }),
    conditions: entry.conditions,
    external: command?.external ?? entry.external ?? [],
    minify: minify && (command?.minify ?? true),
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
