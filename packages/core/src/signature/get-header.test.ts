import { describe, expect, it } from 'vitest';
import { getHeader } from './verify.js';

describe('getHeader', () => {
  it('finds a header by its lower-case name under any case', () => {
    expect(getHeader({ 'x-service-timestamp': '1' }, 'x-service-timestamp')).toBe('1');
    expect(getHeader({ 'X-Service-Timestamp': '2' }, 'x-service-timestamp')).toBe('2');
    expect(getHeader({ 'x-service-signature': 's' }, 'x-service-timestamp')).toBeUndefined();
    expect(getHeader({}, 'x-service-timestamp')).toBeUndefined();
  });

  it('collects every key that matches, like a repeated header, in key order', () => {
    expect(getHeader({ 'X-A': '1', 'x-a': '2' }, 'x-a')).toEqual(['1', '2']);
    expect(getHeader({ 'x-a': ['1', '2'], 'X-A': '3' }, 'x-a')).toEqual(['1', '2', '3']);
    expect(getHeader({ 'X-A': '1', 'x-a': ['2', '3'] }, 'x-a')).toEqual(['1', '2', '3']);
  });

  it('does not mutate a repeated value it was given', () => {
    const repeated = ['1', '2'];
    expect(getHeader({ 'x-a': repeated, 'X-A': '3' }, 'x-a')).toEqual(['1', '2', '3']);
    expect(repeated).toEqual(['1', '2']);
  });

  it('ignores values that are neither strings nor arrays', () => {
    const headers = { 'x-a': undefined, 'X-A': '1' } as unknown as Record<string, string>;
    expect(getHeader(headers, 'x-a')).toBe('1');
  });

  it('reads a Web Headers object through get()', () => {
    const headers = new Headers([
      ['X-A', '1'],
      ['x-a', '2'],
    ]);
    expect(getHeader(headers, 'x-a')).toBe('1, 2');
  });

  it("reads only a record's own keys, also from a null-prototype record like Node's", () => {
    const inherited = Object.create({ 'x-a': 'inherited' }) as Record<string, string>;
    inherited['X-B'] = 'own';
    expect(getHeader(inherited, 'x-a')).toBeUndefined();
    expect(getHeader(inherited, 'x-b')).toBe('own');
    const bare = Object.assign(Object.create(null) as Record<string, string>, { 'x-a': '1' });
    expect(getHeader(bare, 'x-a')).toBe('1');
  });
});
