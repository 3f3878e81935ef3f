import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { USER_AGENT, VERSION } from './version.js';

describe('VERSION', () => {
  it('is the version of packages/core/package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(VERSION).toBe(pkg.version);
    expect(USER_AGENT).toBe(`churn-risk-node/${pkg.version}`);
  });
});
