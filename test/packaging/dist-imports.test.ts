import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

// The built packages, imported by name the way users import them: plain Node, no source condition.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const testDir = join(root, 'test');
const packages = [
  'core',
  'express',
  'fastify',
  'next',
  'sandbox',
  'redis',
  'postgres',
  'hono',
  'koa',
  'lambda',
  'cloudflare',
  'ops',
] as const;
const entries = [
  '@churn-risk/core',
  '@churn-risk/core/store',
  '@churn-risk/core/adapter',
  '@churn-risk/core/testing',
  '@churn-risk/core/wire',
  '@churn-risk/express',
  '@churn-risk/fastify',
  '@churn-risk/next',
  '@churn-risk/sandbox',
  '@churn-risk/sandbox/client',
  '@churn-risk/redis',
  '@churn-risk/redis/testing',
  '@churn-risk/postgres',
  '@churn-risk/postgres/testing',
  '@churn-risk/hono',
  '@churn-risk/koa',
  '@churn-risk/lambda',
  '@churn-risk/cloudflare',
  '@churn-risk/ops',
];

function runNode(args: string[]): string {
  return execFileSync(process.execPath, args, { cwd: testDir, encoding: 'utf8' });
}

beforeAll(() => {
  for (const name of packages) {
    const dir = join(root, 'packages', name);
    if (!existsSync(join(dir, 'dist', 'index.js'))) {
      execFileSync('npm', ['run', 'build', '--silent'], { cwd: dir, stdio: 'inherit' });
    }
  }
});

describe('dist/', () => {
  it.each(entries)('%s imports as ESM and with require(), with the same exports', (entry) => {
    const esm = runNode([
      '--input-type=module',
      '-e',
      `const m = await import(${JSON.stringify(entry)}); console.log(JSON.stringify(Object.keys(m).sort()))`,
    ]);
    const cjs = runNode([
      '-e',
      `const m = require(${JSON.stringify(entry)}); console.log(JSON.stringify(Object.keys(m).filter((k) => k !== '__esModule' && k !== 'module.exports').sort()))`,
    ]);
    const esmKeys = JSON.parse(esm) as string[];
    expect(esmKeys.length).toBeGreaterThan(0);
    expect(JSON.parse(cjs)).toEqual(esmKeys);
    expect(esmKeys).toMatchSnapshot();
  });

  it('core ships both HMAC back ends, and they agree', () => {
    const out = runNode([
      '--input-type=module',
      '-e',
      `
      const dist = ${JSON.stringify(join(root, 'packages/core/dist'))};
      const { backend: node } = await import(dist + '/hmac-node.js');
      const { backend: web } = await import(dist + '/hmac-web.js');
      const key = new TextEncoder().encode('k');
      const parts = [new TextEncoder().encode('1700000000.{"a":1}')];
      const hex = (b) => Buffer.from(b).toString('hex');
      console.log(JSON.stringify([node.name, web.name, hex(node.hmacSha256(key, parts)), hex(web.hmacSha256(key, parts))]));
      `,
    ]);
    const [nodeName, webName, nodeHex, webHex] = JSON.parse(out) as string[];
    expect(nodeName).toBe('node:crypto');
    expect(webName).toBe('@noble/hashes');
    expect(nodeHex).toMatch(/^[0-9a-f]{64}$/);
    expect(webHex).toBe(nodeHex);
  });

  it('the built package entry signs like an independent HMAC computation', () => {
    const out = runNode([
      '--input-type=module',
      '-e',
      `import { signPayload } from '@churn-risk/core/testing'; console.log(signPayload({ body: '{"a":1}', secret: 'k', timestamp: 1700000000 }).signature)`,
    ]).trim();
    const expected = execFileSync(
      process.execPath,
      [
        '-e',
        `console.log(require('node:crypto').createHmac('sha256', 'k').update('1700000000.{"a":1}').digest('hex'))`,
      ],
      { encoding: 'utf8' },
    ).trim();
    expect(out).toBe(`sha256=${expected}`);
  });
});
