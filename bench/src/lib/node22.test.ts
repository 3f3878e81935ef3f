import { describe, expect, it } from 'vitest';
import { atLeast, node22Binary } from './node22.js';

describe('atLeast', () => {
  it('compares major and minor', () => {
    expect(atLeast('22.18.0', 22, 18)).toBe(true);
    expect(atLeast('22.17.9', 22, 18)).toBe(false);
    expect(atLeast('23.0.0', 22, 18)).toBe(true);
    expect(atLeast('20.20.2', 22, 12)).toBe(false);
  });
});

describe('node22Binary', () => {
  it('names the install command when the binary is missing', () => {
    expect(() => node22Binary({ BENCH_NODE22: '/nonexistent/node' })).toThrow(
      /\/nonexistent\/node is missing: run `npx -y pnpm@10 install --frozen-lockfile`/,
    );
  });
});
