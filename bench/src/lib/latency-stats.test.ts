import { describe, expect, it } from 'vitest';
import { pairDelays, percentile, summarizeLatencies } from './latency-stats.js';

describe('percentile', () => {
  it('takes the nearest rank: the smallest value with p % of the samples at or below it', () => {
    const values = [5, 1, 4, 2, 3]; // unsorted on purpose
    expect(percentile(values, 50)).toBe(3);
    expect(percentile(values, 20)).toBe(1);
    expect(percentile(values, 21)).toBe(2);
    expect(percentile(values, 100)).toBe(5);
  });

  it('gives p99 of 100 samples as the 99th smallest, of 1,000 as the 990th', () => {
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1).reverse();
    expect(percentile(hundred, 99)).toBe(99);
    const thousand = Array.from({ length: 1000 }, (_, i) => i + 1);
    expect(percentile(thousand, 99)).toBe(990);
    expect(percentile(thousand, 50)).toBe(500);
  });

  it('keeps negative delays (a handler that started before the sender saw its 202)', () => {
    expect(percentile([-2, 0.5, 1], 50)).toBe(0.5);
    expect(summarizeLatencies([-2, 0.5, 1])).toEqual({
      count: 3,
      p50: 0.5,
      p99: 1,
      min: -2,
      max: 1,
    });
  });

  it('is NaN without samples and refuses a p outside (0, 100]', () => {
    expect(percentile([], 50)).toBeNaN();
    expect(summarizeLatencies([]).min).toBeNaN();
    expect(() => percentile([1], 0)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });

  it("does not reorder the caller's array", () => {
    const values = [3, 1, 2];
    percentile(values, 50);
    expect(values).toEqual([3, 1, 2]);
  });
});

describe('pairDelays', () => {
  it('subtracts each accept from its start and counts the alerts seen on one side only', () => {
    const accepted = new Map([
      ['a', 100],
      ['b', 200],
      ['c', 300],
    ]);
    const started = new Map([
      ['b', 250.5],
      ['a', 99],
      ['z', 1],
    ]);
    expect(pairDelays(accepted, started)).toEqual({ delays: [-1, 50.5], unmatched: 2 });
  });
});
