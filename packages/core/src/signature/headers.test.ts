import { describe, expect, it } from 'vitest';
import { isWebhookVerificationError } from '../errors/webhook-verification-error.js';
import { toHex } from './bytes.js';
import {
  headerText,
  MAX_SIGNATURES,
  parseSignatureHeader,
  parseTimestampHeader,
} from './verify.js';

const HEX = 'a1'.repeat(32);
const HEX2 = '0f'.repeat(32);

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isWebhookVerificationError(error)) return error.code;
    throw error;
  }
  return 'NO_ERROR';
}

describe('headerText', () => {
  it('treats absent, empty and blank values as missing', () => {
    for (const value of [undefined, null, '', '   ', [], ['']])
      expect(headerText(value)).toBeUndefined();
  });

  it('joins a repeated header with ", " as Node does', () => {
    expect(headerText(['a', 'b'])).toBe('a, b');
    expect(headerText('x')).toBe('x');
  });
});

describe('parseSignatureHeader', () => {
  it('reads one signature into 32 bytes', () => {
    const [digest, ...rest] = parseSignatureHeader(`sha256=${HEX}`);
    expect(rest).toEqual([]);
    expect(toHex(digest!)).toBe(HEX);
  });

  it('reads several, with optional spaces or tabs around the commas', () => {
    for (const text of [
      `sha256=${HEX},sha256=${HEX2}`,
      `sha256=${HEX} , sha256=${HEX2}`,
      ` sha256=${HEX},\tsha256=${HEX2} `,
    ]) {
      expect(parseSignatureHeader(text).map(toHex)).toEqual([HEX, HEX2]);
    }
  });

  it('reads upper-case hex as the same bytes', () => {
    expect(parseSignatureHeader(`sha256=${HEX.toUpperCase()}`).map(toHex)).toEqual([HEX]);
  });

  it.each([
    ['a short digest', `sha256=${HEX.slice(1)}`],
    ['a long digest', `sha256=${HEX}0`],
    ['another scheme', `sha1=${HEX}`],
    ['an upper-case scheme', `SHA256=${HEX}`],
    ['no scheme', HEX],
    ['a space inside the item', `sha256= ${HEX}`],
    ['non-hex characters', `sha256=${'g'.repeat(64)}`],
    ['an empty item', `sha256=${HEX},,sha256=${HEX2}`],
    ['a trailing comma', `sha256=${HEX},`],
    ['a valid item next to a malformed one', `sha256=${HEX}, v1=${HEX2}`],
    ['a lone comma', ','],
    ['a semicolon separator', `sha256=${HEX};sha256=${HEX2}`],
  ])('refuses %s with INVALID_SIGNATURE', (_name, text) => {
    expect(codeOf(() => parseSignatureHeader(text))).toBe('INVALID_SIGNATURE');
  });

  it(`accepts ${MAX_SIGNATURES} signatures and refuses more`, () => {
    const list = (n: number): string => Array.from({ length: n }, () => `sha256=${HEX}`).join(',');
    expect(parseSignatureHeader(list(MAX_SIGNATURES))).toHaveLength(MAX_SIGNATURES);
    expect(codeOf(() => parseSignatureHeader(list(MAX_SIGNATURES + 1)))).toBe('INVALID_SIGNATURE');
  });
});

describe('parseTimestampHeader', () => {
  it('reads 1 to 12 ASCII digits as seconds', () => {
    expect(parseTimestampHeader('1767225600')).toBe(1_767_225_600);
    expect(parseTimestampHeader('0')).toBe(0);
    expect(parseTimestampHeader('999999999999')).toBe(999_999_999_999);
  });

  it.each([
    '',
    '-1',
    '+1767225600',
    '1767225600.5',
    '1e9',
    '0x10',
    ' 1767225600',
    '1767225600 ',
    '1,2',
    '١٢٣',
    '１２３',
    '1234567890123',
    'Thu, 01 Jan 2026',
  ])('refuses %j with INVALID_TIMESTAMP', (text) => {
    expect(codeOf(() => parseTimestampHeader(text))).toBe('INVALID_TIMESTAMP');
  });
});
