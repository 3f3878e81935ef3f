import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  bundleReadme,
  CASES,
  esbuildCommandOf,
  GZIP_BUDGET_BYTES,
  OPS_GZIP_BUDGET_BYTES,
  OPS_WORKER_CASE,
  QUEUE_MODE_CASE,
  ROOT,
  snippetOf,
  type ReadmeBundle,
} from '../../bench/src/bundle/readme-bundles.js';

// Bundle size: the READMEs' workers and Lambda handlers, in memory and in queue
// mode, bundled by esbuild and minified, are at most 25 KiB gzip (25,600 bytes, as wrangler reports sizes), and hold neither classic zod nor the API client. Sizes are deterministic for
// a given lockfile, so they are asserted; `pnpm bench bundle` prints them in full. The ops
// README's Worker (the operations page over D1) is at most 30 KiB gzip and holds no zod.
const root = fileURLToPath(ROOT);
const bundles = new Map<string, ReadmeBundle>();

beforeAll(async () => {
  for (const name of ['core', 'cloudflare', 'lambda', 'ops']) {
    const dir = join(root, 'packages', name);
    if (!existsSync(join(dir, 'dist', 'index.js'))) {
      execFileSync('npm', ['run', 'build', '--silent'], { cwd: dir, stdio: 'inherit' });
    }
  }
  for (const entry of [...CASES, OPS_WORKER_CASE]) {
    bundles.set(entry.name, await bundleReadme(entry));
  }
});

/** Code that only the in-memory queue holds (its `kind`, minified). */
const MEMORY_QUEUE_MARKER = 'kind="memory"';

describe.each(CASES.map((entry) => [entry.name, entry] as const))('the README %s', (name) => {
  it(`is at most ${GZIP_BUDGET_BYTES} bytes gzip once bundled and minified`, () => {
    const bundle = bundles.get(name)!;
    expect(bundle.gzip).toBeLessThanOrEqual(GZIP_BUDGET_BYTES);
    expect(bundle.min).toBeGreaterThan(bundle.gzip); // a real bundle was measured
  });

  it('holds zod/mini only, and no API client, batcher or wire schema', () => {
    const { code, packages } = bundles.get(name)!;
    expect(packages.map((p) => p.name)).toContain('zod');
    // Words that only these parts hold (classic zod's schema names; the client's environment
    // variable; the batcher's and the wire schemas' messages).
    const markers = {
      'classic zod': '"ZodString"',
      'the API client': 'CHURN_RISK_API_KEY',
      'the event batcher': 'A batcher flush failed',
      'the wire schemas': 'cooldown must be',
    };
    const found = Object.entries(markers).filter(([, text]) => code.includes(text));
    expect(found.map(([part]) => part)).toEqual([]);
    expect(code).toContain('"ZodMiniString"'); // the markers are worded as bundles word them
  });
});

describe('the queue-mode bundles (createQueueReceiver)', () => {
  it('hold no in-memory queue, which the in-memory examples do hold', () => {
    expect(bundles.get('worker')!.code).toContain(MEMORY_QUEUE_MARKER);
    expect(bundles.get('lambda')!.code).toContain(MEMORY_QUEUE_MARKER);
    expect(bundles.get('worker-queue')!.code).not.toContain(MEMORY_QUEUE_MARKER);
    expect(bundles.get('lambda-sqs')!.code).not.toContain(MEMORY_QUEUE_MARKER);
  });

  it('make the Lambda queue-mode handler over 2 KB gzip smaller than createReceiver({ queue })', async () => {
    const lean = bundles.get('lambda-sqs')!;
    const snippet = snippetOf(QUEUE_MODE_CASE);
    expect(snippet).toContain('createQueueReceiver(');
    const full = await bundleReadme(QUEUE_MODE_CASE, (text) =>
      text.replaceAll('createQueueReceiver', 'createReceiver'),
    );
    expect(full.code).toContain(MEMORY_QUEUE_MARKER);
    expect(full.gzip - lean.gzip).toBeGreaterThan(2_000);
  });
});

describe('the bundled snippets', () => {
  it("are the READMEs' first TypeScript blocks: the worker and the Lambda handler", () => {
    const worker = readFileSync(join(root, 'packages/cloudflare/README.md'), 'utf8');
    const lambda = readFileSync(join(root, 'packages/lambda/README.md'), 'utf8');
    expect(worker).toMatch(/```ts\n\/\/ src\/worker\.ts\nimport \{ createWorker \}/);
    expect(lambda).toMatch(/```ts\n\/\/ handler\.ts[^\n]*\nimport \{ createReceiver \}/);
  });
});

/**
 * The minified KiB and the gzip bytes a README quotes in the first sentence after `after` that
 * gives both (`64.2 KiB, **23.2 KB gzip** (23,196 bytes`).
 */
function quotedSizes(readme: string, after: string): { kib: number; gzip: number } {
  const text = readFileSync(join(root, readme), 'utf8');
  const start = text.indexOf(after);
  expect(start, `${readme} holds ${after}`).toBeGreaterThanOrEqual(0);
  const rest = text.slice(start);
  const kib = /(\d+\.\d) KiB\b/.exec(rest);
  const gzip = /(\d{1,3}(?:,\d{3})+)\s+bytes/.exec(rest.slice(kib?.index ?? 0).slice(0, 120));
  expect(kib, `a size in KiB after ${after} in ${readme}`).not.toBeNull();
  expect(gzip, `its gzip bytes in ${readme}`).not.toBeNull();
  return { kib: Number(kib?.[1]), gzip: Number(gzip?.[1]?.replaceAll(',', '')) };
}

describe("the Lambda README's and guide's bundling", () => {
  it('shows an esbuild command that minifies and leaves the AWS SDK out (the size test bundles with its flags)', () => {
    const command = esbuildCommandOf(QUEUE_MODE_CASE);
    expect(command).toMatchObject({
      platform: 'node',
      format: 'esm',
      external: ['@aws-sdk/*'],
      minify: true,
    });
  });

  it('quotes the sizes its handlers bundle to (within 1 %)', () => {
    // The README quotes its handler; the guide (docs/lambda.md) both, with the esbuild command.
    const cases: [string, string, string][] = [
      ['lambda', 'packages/lambda/README.md', '```ts\n// handler.ts, deployed'],
      ['lambda', 'docs/lambda.md', '```ts\n// handler.ts, deployed'],
      ['lambda-sqs', 'docs/lambda.md', 'npx esbuild handler.ts'],
    ];
    for (const [name, readme, after] of cases) {
      const bundle = bundles.get(name)!;
      const quoted = quotedSizes(readme, after);
      expect(Math.abs(quoted.gzip - bundle.gzip) / bundle.gzip, `${name}: gzip`).toBeLessThan(0.01);
      expect(
        Math.abs(quoted.kib - bundle.min / 1024) / (bundle.min / 1024),
        `${name}: KiB`,
      ).toBeLessThan(0.01);
    }
  });
});

describe("the ops README's Worker (the operations page over D1)", () => {
  /** Words that only these parts hold, as a minified bundle words them. */
  const markers = {
    'classic zod': '"ZodString"',
    "classic zod's locales": 'Ongeldige invoer', // its Dutch locale, which classic zod bundles
    'the API client': 'CHURN_RISK_API_KEY',
    'the event batcher': 'A batcher flush failed',
    'the wire schemas': 'cooldown must be',
  };

  it(`is at most ${OPS_GZIP_BUDGET_BYTES} bytes gzip once bundled and minified`, () => {
    const snippet = snippetOf(OPS_WORKER_CASE);
    expect(snippet).toContain('createOpsHandler(');
    expect(snippet).toContain('createFailedStore(');
    const bundle = bundles.get('ops-worker')!;
    expect(bundle.gzip).toBeLessThanOrEqual(OPS_GZIP_BUDGET_BYTES);
    expect(bundle.min).toBeGreaterThan(bundle.gzip); // a real bundle was measured
    expect(bundle.packages.map((p) => p.name)).toEqual(
      expect.arrayContaining(['@churn-risk/ops', '@churn-risk/core', '@churn-risk/cloudflare']),
    );
  });

  it('holds no zod (neither classic zod nor its locales), no API client, batcher or wire schema', () => {
    const { code, packages } = bundles.get('ops-worker')!;
    expect(packages.map((p) => p.name)).not.toContain('zod');
    const found = Object.entries(markers).filter(([, text]) => code.includes(text));
    expect(found.map(([part]) => part)).toEqual([]);
  });

  it("finds each part by its words: the same Worker exporting core's API client holds them all", async () => {
    const withClient = await bundleReadme(
      OPS_WORKER_CASE,
      (text) =>
        `${text}\nexport { ChurnRiskClient, createEventBatcher } from '@churn-risk/core';\n`,
    );
    const missing = Object.entries(markers).filter(([, text]) => !withClient.code.includes(text));
    expect(missing.map(([part]) => part)).toEqual([]);
    expect(withClient.gzip).toBeGreaterThan(OPS_GZIP_BUDGET_BYTES);
  });

  it('is the size the ops README quotes (within 1 %)', () => {
    const bundle = bundles.get('ops-worker')!;
    const quoted = quotedSizes('docs/ops.md', '**Bundle size.**');
    const hint = `the ops guide (docs/ops.md) quotes ${quoted.gzip} bytes gzip; the bundle is ${bundle.gzip} (${(bundle.min / 1024).toFixed(1)} KiB minified): update the README`;
    expect(Math.abs(quoted.gzip - bundle.gzip) / bundle.gzip, hint).toBeLessThan(0.01);
    expect(Math.abs(quoted.kib - bundle.min / 1024) / (bundle.min / 1024), hint).toBeLessThan(0.01);
  });
});
