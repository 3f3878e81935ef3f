import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COMPILERS,
  installProject,
  pack,
  publishedPackages,
  rangeInRepository,
  typeCheck,
  type CheckResult,
  type Compiler,
} from './packed.js';

// Types without Node: the published declarations of every package, packed and installed
// as a user gets them, type-check under `strict` with `skipLibCheck: false`, on TypeScript 5.9 and
// 7, in these projects:
// - workers: a Worker typed with `@cloudflare/workers-types` alone (bundler resolution, as
//   wrangler's template);
// - dom: `lib: ["dom", "es2022"]` and no `types` at all (nodenext resolution, the strict one);
// - node: a Node server's project, `@types/node` and `lib: ["es2022"]` (no DOM);
// - next: a Next.js app's project as create-next-app writes it (DOM and esnext libs, React types).
// Every entry that is not Node-only (below) is checked in the workers and dom projects, which may
// not load `@types/node` at all (not even through a dependency's `/// <reference types="node" />`).
// Every entry is checked in a Node project: `node`, or `next` for the Next.js adapter.

type KindName = 'workers' | 'dom' | 'node' | 'next';

/**
 * The entries that are Node-only by nature, each with the Node project it is checked in and why:
 * their framework's or driver's own types need `@types/node` (so does every project that uses
 * them). "Types" in docs/guarantees.md says the same. Every other entry, including one added later,
 * is checked without Node.
 */
const NODE_ONLY: Record<string, { project: 'node' | 'next'; why: string }> = {
  '@churn-risk/express': {
    project: 'node',
    why: 'Express middleware: @types/express needs @types/node',
  },
  '@churn-risk/fastify': {
    project: 'node',
    why: "a Fastify plugin: fastify's types need @types/node",
  },
  '@churn-risk/koa': { project: 'node', why: 'Koa middleware: @types/koa needs @types/node' },
  '@churn-risk/next': {
    project: 'next',
    why: "Next.js route handlers: next's own types need @types/node, @types/react and the DOM lib, which create-next-app sets up (also for the edge runtime)",
  },
  '@churn-risk/redis': { project: 'node', why: 'BullMQ and ioredis (Node sockets)' },
  '@churn-risk/redis/testing': { project: 'node', why: 'starts redis-server processes' },
  '@churn-risk/postgres': { project: 'node', why: 'pg (Node sockets)' },
  '@churn-risk/postgres/testing': { project: 'node', why: 'starts PostgreSQL processes' },
  '@churn-risk/sandbox': {
    project: 'node',
    why: 'a Fastify server and a CLI (its client, @churn-risk/sandbox/client, is not)',
  },
};

/**
 * Third-party declarations that fail `skipLibCheck: false` on their own, in any project that
 * imports them, with why. Their errors are left out; any other
 * diagnostic, above all one in a file of ours, fails the test.
 */
const UPSTREAM: Record<string, string> = {
  next: "its url-pattern.d.ts names URLPattern, which TypeScript 5.9's DOM lib lacks (TypeScript 7's has it)",
};

/** The peer dependencies of the entries checked without Node. */
const WEB_PEERS = ['hono'];

interface Kind {
  /** Third-party packages the project installs, besides the packed ones. */
  installs: string[];
  compilerOptions: Record<string, unknown>;
}

const KINDS: Record<KindName, Kind> = {
  workers: {
    installs: ['@cloudflare/workers-types', ...WEB_PEERS],
    compilerOptions: {
      module: 'esnext',
      moduleResolution: 'bundler',
      lib: ['es2022'],
      types: ['@cloudflare/workers-types'],
    },
  },
  dom: {
    installs: WEB_PEERS,
    compilerOptions: {
      module: 'nodenext',
      moduleResolution: 'nodenext',
      lib: ['dom', 'es2022'],
      types: [],
    },
  },
  node: {
    installs: [
      '@types/node',
      'express',
      '@types/express',
      'fastify',
      'koa',
      '@types/koa',
      ...WEB_PEERS,
    ],
    compilerOptions: {
      module: 'nodenext',
      moduleResolution: 'nodenext',
      lib: ['es2022'],
      types: ['node'],
    },
  },
  next: {
    installs: ['@types/node', 'next', 'react', 'react-dom', '@types/react', '@types/react-dom'],
    compilerOptions: {
      module: 'esnext',
      moduleResolution: 'bundler',
      lib: ['dom', 'dom.iterable', 'esnext'],
      types: ['node'],
      jsx: 'react-jsx',
      isolatedModules: true,
      esModuleInterop: true,
    },
  },
};
const WITHOUT_NODE = ['workers', 'dom'] as const;

/**
 * Node's own request and response fit `receiver.node` and the Node request path, which core types
 * by the members it uses (`NodeRequest`, `NodeResponse`) so that its declarations need no Node.
 */
const NODE_FIT = `
import { createServer } from 'node:http';
import { PassThrough } from 'node:stream';
import { createReceiver } from '@churn-risk/core';
import { handleNodeRequest, readNodeBody, sendNodeResponse } from '@churn-risk/core/adapter';

const receiver = createReceiver({ secret: 'whsec_types' });
createServer(receiver.node);
createServer((req, res) => {
  void handleNodeRequest(receiver, req, { rawBodyFix: 'none' }).then((result) => {
    if (result !== undefined) sendNodeResponse(res, result);
  });
});
export const body: Promise<Uint8Array> = readNodeBody(new PassThrough(), { maxBytes: 10 });
`;

const packages = publishedPackages();
const entries = packages.flatMap((pkg) => pkg.entries);
/** The entries `kind`'s project checks. */
function checked(kind: KindName): string[] {
  return entries.filter((entry) => {
    const project = NODE_ONLY[entry]?.project;
    if (kind === 'workers' || kind === 'dom') return project === undefined;
    return kind === (project ?? 'node');
  });
}

/** Groups tsc's lines into diagnostics (a continuation line is indented). */
function diagnosticsOf(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    const last = out.at(-1);
    if (/^\s/.test(line) && last !== undefined) out[out.length - 1] = `${last}\n${line}`;
    else out.push(line);
  }
  return out;
}

/** The third-party package a diagnostic is in, when it is one of `UPSTREAM`. */
function upstreamOf(diagnostic: string): string | undefined {
  const file = diagnostic.split('(')[0] ?? '';
  return Object.keys(UPSTREAM).find((name) => file.includes(`/node_modules/${name}/`));
}

let workspace: string;
const results = new Map<string, CheckResult>();
const key = (kind: KindName, compiler: Compiler): string => `${kind} ${compiler}`;

beforeAll(async () => {
  workspace = mkdtempSync(join(tmpdir(), 'churn-risk-types-'));
  const tarballs = await pack(packages, join(workspace, 'tarballs'));
  await Promise.all(
    (Object.keys(KINDS) as KindName[]).map(async (kind) => {
      const dir = join(workspace, kind);
      const names = new Set(checked(kind).map((entry) => entry.split('/').slice(0, 2).join('/')));
      const dependencies: Record<string, string> = {};
      for (const name of names) dependencies[name] = tarballs.get(name) ?? '';
      for (const name of KINDS[kind].installs) dependencies[name] = rangeInRepository(name);
      await installProject(dir, dependencies, tarballs);
      const files = ['entries.ts', ...(kind === 'node' ? ['node-fit.ts'] : [])];
      writeFileSync(
        join(dir, 'entries.ts'),
        checked(kind)
          .map((entry, index) => `export * as entry${String(index)} from '${entry}';\n`)
          .join(''),
      );
      writeFileSync(join(dir, 'node-fit.ts'), NODE_FIT);
      const compilerOptions = {
        target: 'es2022',
        ...KINDS[kind].compilerOptions,
        strict: true,
        skipLibCheck: false,
        noEmit: true,
      };
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files }));
      for (const compiler of Object.keys(COMPILERS) as Compiler[]) {
        results.set(key(kind, compiler), await typeCheck(compiler, dir, 'tsconfig.json'));
      }
    }),
  );
}, 600_000);

afterAll(() => {
  if (workspace !== undefined) rmSync(workspace, { recursive: true, force: true });
});

describe('which project checks which entry', () => {
  it('names only entries that exist as Node-only', () => {
    expect(Object.keys(NODE_ONLY).filter((entry) => !entries.includes(entry))).toEqual([]);
  });

  it('checks core, its testing entry and the edge adapters without Node, and every entry with Node', () => {
    for (const kind of WITHOUT_NODE) {
      expect(checked(kind)).toEqual(
        expect.arrayContaining([
          '@churn-risk/core',
          '@churn-risk/core/testing',
          '@churn-risk/cloudflare',
          '@churn-risk/hono',
          '@churn-risk/lambda',
          '@churn-risk/sandbox/client',
        ]),
      );
    }
    expect([...checked('node'), ...checked('next')].sort()).toEqual([...entries].sort());
  });
});

describe.each(Object.keys(COMPILERS) as Compiler[])(
  'the packed declarations, strict, skipLibCheck: false, %s',
  (compiler) => {
    it.each(Object.keys(KINDS) as KindName[])('type-check in the %s project', (kind) => {
      const result = results.get(key(kind, compiler));
      expect(result, 'the check ran').toBeDefined();
      const diagnostics = diagnosticsOf(result?.diagnostics ?? []);
      const ours = diagnostics.filter((diagnostic) => upstreamOf(diagnostic) === undefined);
      expect(ours, `${kind} project, ${compiler}`).toEqual([]);
      // Every checked entry was part of the program (an empty program would pass too).
      for (const entry of checked(kind)) {
        const folder = `/node_modules/${entry.split('/').slice(0, 2).join('/')}/dist/`;
        expect(
          result?.files.some((file) => file.includes(folder)),
          entry,
        ).toBe(true);
      }
    });

    it.each(WITHOUT_NODE)('load no @types/node in the %s project', (kind) => {
      const files = results.get(key(kind, compiler))?.files ?? [];
      expect(files.length).toBeGreaterThan(0);
      expect(files.filter((file) => file.includes('/@types/node/'))).toEqual([]);
    });
  },
);
