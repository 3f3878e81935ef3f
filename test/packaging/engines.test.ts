import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The supported Node range, decided once (CONTRIBUTING.md, "Node versions"; the root README states it): the versions where
// `require()` of an ES module works without a flag.
const RANGE = '^20.19.0 || >=22.12.0';
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const manifests = [
  'package.json',
  ...readdirSync(join(ROOT, 'packages'))
    .map((name) => `packages/${name}/package.json`)
    .filter((path) => existsSync(join(ROOT, path))),
];

describe('the Node range', () => {
  it.each(manifests)('%s declares engines.node', (path) => {
    const manifest = JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as {
      engines?: { node?: string };
    };
    expect(manifest.engines?.node, path).toBe(RANGE);
  });

  it('is stated in the root README, and this Node is inside it', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain(`\`${RANGE}\``);
    const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
    expect((major === 20 && minor >= 19) || major > 22 || (major === 22 && minor >= 12)).toBe(true);
  });
});
