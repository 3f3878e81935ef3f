import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createTestDelivery } from '@churn-risk/core/testing';
import { startPostgres, type PostgresServer } from '@churn-risk/postgres/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  nextStarted,
  runNextCommand,
  waitForOutput,
  type NextRun,
} from '../support/next-process.js';
import { pack, publishedPackages, ROOT, run } from './packed.js';
import { readmeParts } from './readme-parts.js';

// The Next.js READMEs as a new user follows them: a fresh `create-next-app@16` app (TypeScript,
// App Router, Turbopack, the template's own next.config with `cacheComponents: true`; `--empty`
// only leaves out the home page's Google fonts, which `next build` would fetch), the packed
// @churn-risk tarballs installed, and the README's `app/` and `lib/` files written from its code
// blocks as the README text holds them at test time (a block whose first line is `// <path>`).
// Each README's files make the app in turn (a user follows one README, and both name
// `lib/churn-risk.ts`): one scaffold and one install, then per README its files, `next build` with
// no environment at all, and `next start` on Node 22 with the environment, one signed delivery and
// the sweep route. The Postgres app also holds the ops guide's Next.js route (the operations page
// over the app's database), which must build with no environment too and answer behind
// `authorize` once started.

/** The READMEs whose App Router files make an app, and the handler's line each one prints. */
const READMES = {
  'packages/next/README.md': (userId: string) => `${userId} is at `,
  'examples/next-postgres/README.md': (userId: string) =>
    `create the CRM task { userId: '${userId}'`,
} as const;
type Readme = keyof typeof READMES;

/**
 * The READMEs whose App Router files join a README's app: the operations page's route of the ops
 * guide (docs/ops.md), in the app whose receiver is on Postgres (the page's queue is on that database).
 */
const ADDED: Partial<Record<Readme, readonly string[]>> = {
  'examples/next-postgres/README.md': ['docs/ops.md'],
};
const OPS_ROUTE = 'app/ops/[[...path]]/route.ts';
const OPS_PASSWORD = 'ops_fresh_next_app_password';
const OPS_CSRF_SECRET = 'ops-fresh-next-app-csrf-secret-0123456789';

/** The workspace's Node 22 (test/package.json's `node22`), the runtime `next start` is tested on. */
const NODE22 = join(ROOT, 'test', 'node_modules', 'node22', 'bin', 'node');
const PNPM = ['-y', 'pnpm@10'];
const BUFFER = 64 << 20;
const SECRET = 'whsec_fresh_next_app';
const CRON_SECRET = 'cron_fresh_next_app_0123456789';

/**
 * The App Router files of a README by path (`app/...`, `lib/...`). Pages Router files are left
 * out: a project has the App Router webhook route or the Pages Router one, not both (they serve
 * the same path). A path given twice, or a file block that needs an invisible context to compile,
 * is an error: the app is made of the blocks exactly as shown.
 */
function appFiles(readme: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const snippet of readmeParts(ROOT, join(ROOT, readme)).snippets) {
    const file = snippet.file;
    if (file === undefined || snippet.skipped || !/^(app|lib)\//.test(file)) continue;
    if (files.has(file)) throw new Error(`${readme} gives ${file} twice`);
    if (snippet.context.trim() !== '')
      throw new Error(`${readme}: ${file} is not complete as shown (it has a snippet-context)`);
    files.set(file, snippet.code);
  }
  return files;
}

/** `next build`'s output and wall time, for the app of one README. */
interface Built {
  output: string;
  ms: number;
}

let work: string | undefined;
/** The scaffolded and installed app, which holds one README's files at a time. */
let app = '';
const running = new Set<NextRun>();

/** Runs `npx <args>` in `cwd`, rejecting with its output when it fails. */
async function npx(args: readonly string[], cwd: string, env?: NodeJS.ProcessEnv): Promise<void> {
  await run('npx', [...args], { cwd, env: env ?? process.env, maxBuffer: BUFFER });
}

/** `create-next-app@16` into `dir`, non-interactive, installing nothing (pnpm does, below). */
async function scaffold(parent: string, name: string): Promise<string> {
  await npx(
    [
      '-y',
      'create-next-app@16',
      name,
      '--ts',
      '--app',
      '--empty',
      '--yes',
      '--skip-install',
      '--disable-git',
      '--use-pnpm',
      '--no-agent-feedback',
    ],
    parent,
    { ...process.env, CI: 'true', NEXT_TELEMETRY_DISABLED: '1' },
  );
  return join(parent, name);
}

/** Adds the packed packages to the app's own dependencies and installs them all with pnpm. */
async function install(dir: string, tarballs: ReadonlyMap<string, string>): Promise<void> {
  const manifestPath = join(dir, 'package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    dependencies: Record<string, string>;
    pnpm?: { overrides?: Record<string, string> };
  };
  Object.assign(manifest.dependencies, Object.fromEntries(tarballs));
  // Our packages' dependencies on each other resolve to the tarballs too, never the registry.
  manifest.pnpm = { ...manifest.pnpm, overrides: Object.fromEntries(tarballs) };
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  await npx([...PNPM, 'install', '--prefer-offline'], dir);
}

/** Waits for `run` to exit; rejects with its output unless it exited 0. */
async function succeeded(next: NextRun, what: string): Promise<void> {
  const { code } = await next.exited;
  if (code !== 0)
    throw new Error(`${what} failed (exit ${String(code)}):\n${next.output().slice(-6000)}`);
}

/** Stops `next` (its whole process group) and waits for it. */
async function stop(next: NextRun): Promise<void> {
  const pid = next.child.pid;
  if (pid !== undefined && next.child.exitCode === null && next.child.signalCode === null) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await next.exited;
  }
  running.delete(next);
}

/** `next start` of `dir` on Node 22, on a free port of 127.0.0.1, with `env`. */
async function start(
  dir: string,
  env: Record<string, string>,
): Promise<{ next: NextRun; url: string }> {
  const next = runNextCommand(dir, ['start', '--port', '0', '--hostname', '127.0.0.1'], {
    node: NODE22,
    env,
    detached: true,
  });
  running.add(next);
  try {
    return { next, url: await nextStarted(next, 120_000) };
  } catch (error) {
    await stop(next);
    throw error;
  }
}

/** Posts one signed test delivery for `userId`; resolves with the status. */
async function deliver(url: string, userId: string): Promise<number> {
  const { headers, body } = createTestDelivery({ userId }, { secret: SECRET });
  const response = await fetch(`${url}/api/webhooks/churn-risk`, { method: 'POST', headers, body });
  await response.arrayBuffer();
  return response.status;
}

/** Calls the sweep route, with `authorization` when given. */
async function sweep(url: string, authorization?: string): Promise<Response> {
  return fetch(`${url}/api/churn-risk/sweep`, {
    headers: authorization === undefined ? {} : { authorization },
  });
}

/** The files of the README built last, removed before the next one's are written. */
let written: string[] = [];

/**
 * Writes `readme`'s App Router files (and those of the READMEs `ADDED` to it) into the app, alone,
 * and builds it with no environment.
 */
async function buildFor(readme: Readme): Promise<Built & { files: Map<string, string> }> {
  for (const path of written) rmSync(join(app, path), { force: true });
  const files = appFiles(readme);
  for (const added of ADDED[readme] ?? []) {
    for (const [path, code] of appFiles(added)) {
      if (files.has(path)) throw new Error(`${added} and ${readme} both give ${path}`);
      files.set(path, code);
    }
  }
  for (const [path, code] of files) {
    mkdirSync(join(app, dirname(path)), { recursive: true });
    writeFileSync(join(app, path), code);
  }
  written = [...files.keys()];
  // No environment at all at build time: no secret, no database URL, no CRON_SECRET.
  const startedAt = performance.now();
  const build = runNextCommand(app, ['build'], { node: NODE22, replaceEnv: true });
  running.add(build);
  try {
    await succeeded(build, `next build of the app of ${readme}`);
  } finally {
    running.delete(build);
  }
  return { files, output: build.output(), ms: performance.now() - startedAt };
}

beforeAll(async () => {
  if (!existsSync(NODE22))
    throw new Error(`${NODE22} is missing: run \`npx -y pnpm@10 install\` at the repository root.`);
  work = mkdtempSync(join(tmpdir(), 'churn-risk-fresh-next-'));
  const wanted = [
    '@churn-risk/core',
    '@churn-risk/next',
    '@churn-risk/postgres',
    '@churn-risk/ops',
  ];
  const [template, tarballs] = await Promise.all([
    scaffold(work, 'app'),
    pack(
      publishedPackages().filter((pkg) => wanted.includes(pkg.name)),
      join(work, 'tarballs'),
    ),
  ]);
  await install(template, tarballs);
  app = template;
}, 600_000);

afterAll(async () => {
  for (const next of [...running]) await stop(next);
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
}, 180_000);

/** What every README's app must show of its build. */
function expectBuilt(readme: Readme, built: Built & { files: Map<string, string> }): void {
  expect([...built.files.keys()], readme).toEqual(
    expect.arrayContaining([
      'lib/churn-risk.ts',
      'app/api/webhooks/churn-risk/route.ts',
      'app/api/churn-risk/sweep/route.ts',
    ]),
  );
  // The template's config, as the READMEs say: Turbopack, cacheComponents on.
  expect(readFileSync(join(app, 'next.config.ts'), 'utf8')).toMatch(/cacheComponents:\s*true/);
  expect(built.output).toContain('(Turbopack)');
  expect(built.output).toContain('Cache Components enabled');
  // Both routes are rendered per request, never at build.
  expect(built.output).toMatch(/ƒ \/api\/webhooks\/churn-risk/);
  expect(built.output).toMatch(/ƒ \/api\/churn-risk\/sweep/);
}

describe('packages/next/README.md on a fresh create-next-app@16 app', () => {
  const readme = 'packages/next/README.md';
  let built: (Built & { files: Map<string, string> }) | undefined;

  beforeAll(async () => {
    built = await buildFor(readme);
  }, 600_000);

  it('builds from its own code blocks with no environment (Turbopack, cacheComponents)', () => {
    expect(built).toBeDefined();
    if (built !== undefined) expectBuilt(readme, built);
  });

  it('next start (Node 22) with the environment handles a delivery; the sweep route wants the bearer', async () => {
    const { next, url } = await start(app, { CHURN_RISK_WEBHOOK_SECRET: SECRET, CRON_SECRET });
    try {
      const userId = `fresh_next_${String(process.pid)}`;
      expect(await deliver(url, userId)).toBe(202);
      const line = READMES[readme](userId);
      await waitForOutput(next, (output) => (output.includes(line) ? true : undefined), 30_000);
      const unauthorized = await sweep(url);
      expect(unauthorized.status).toBe(401);
      expect(await unauthorized.text()).not.toContain(CRON_SECRET);
    } finally {
      await stop(next);
    }
    expect(next.output()).not.toContain(CRON_SECRET);
  });
});

describe('examples/next-postgres/README.md on a fresh create-next-app@16 app, on PostgreSQL 15', () => {
  const readme = 'examples/next-postgres/README.md';
  let built: (Built & { files: Map<string, string> }) | undefined;
  let postgres: PostgresServer | undefined;

  beforeAll(async () => {
    built = await buildFor(readme);
    postgres = await startPostgres();
  }, 600_000);

  afterAll(async () => {
    await postgres?.stop();
    postgres?.cleanup();
  }, 60_000);

  it('builds from its own code blocks with no environment (Turbopack, cacheComponents)', () => {
    expect(built).toBeDefined();
    if (built !== undefined) expectBuilt(readme, built);
  });

  it("builds with the ops guide's Next.js route beside it (its Postgres queue made on the first request), rendered per request", () => {
    const route = built?.files.get(OPS_ROUTE);
    expect(route, `docs/ops.md gives ${OPS_ROUTE}`).toBeDefined();
    // The README's route as the issue found it failed here: a queue made at module load.
    expect(route).toContain('createPostgresQueue(');
    expect(route).toMatch(/export async function GET\(/);
    expect(route).toMatch(/export function POST\(/);
    expect(built?.output).toMatch(/ƒ \/ops\/\[\[\.\.\.path\]\]/);
  });

  it('next start (Node 22) with the environment: a delivery handled in its invocation, a sweep with the bearer (200) and one without (401), the ops page behind authorize', async () => {
    const { next, url } = await start(app, {
      CHURN_RISK_WEBHOOK_SECRET: SECRET,
      DATABASE_URL: postgres?.url ?? '',
      CRON_SECRET,
      OPS_PASSWORD,
      OPS_CSRF_SECRET,
    });
    try {
      const userId = `fresh_pg_${String(process.pid)}`;
      expect(await deliver(url, userId)).toBe(202);
      const line = READMES[readme](userId);
      await waitForOutput(next, (output) => (output.includes(line) ? true : undefined), 30_000);

      const swept = await sweep(url, `Bearer ${CRON_SECRET}`);
      expect(swept.status).toBe(200);
      expect(swept.headers.get('content-type')).toMatch(/^application\/json/);
      const result = (await swept.json()) as Record<string, unknown>;
      for (const field of ['completed', 'retried', 'failed', 'left'])
        expect(typeof result[field], field).toBe('number');
      expect(result.left).toBe(0); // the delivery's alert was run in its own invocation

      const unauthorized = await sweep(url);
      expect(unauthorized.status).toBe(401);
      expect(await unauthorized.text()).not.toContain(CRON_SECRET);

      // The operations page: nothing without the password (a Basic challenge); with it, the page,
      // and the counts read from the receiver's database (the delivery above was handled and kept
      // as completed).
      const basic = {
        authorization: `Basic ${Buffer.from(`ops:${OPS_PASSWORD}`).toString('base64')}`,
      };
      const refused = await fetch(`${url}/ops`);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toMatch(/^Basic realm="/);
      expect(await refused.text()).not.toContain(OPS_PASSWORD);
      const page = await fetch(`${url}/ops`, { headers: basic });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toMatch(/^<!doctype html>/i);
      const counts = await fetch(`${url}/ops/api/counts`, { headers: basic });
      expect(counts.status).toBe(200);
      const status = (await counts.json()) as {
        counts?: Record<string, number>;
        health: { reachable: boolean };
      };
      expect(status.health.reachable).toBe(true);
      expect(status.counts?.failed).toBe(0);
      expect(status.counts?.completed).toBeGreaterThanOrEqual(1);
    } finally {
      await stop(next);
    }
    expect(next.output()).not.toContain(CRON_SECRET);
    expect(next.output()).not.toContain(OPS_PASSWORD);
  });
});
