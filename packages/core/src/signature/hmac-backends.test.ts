import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from './bytes.js';
import { constantTimeEqual } from './bytes.js';
import { constantTimeEqualLatin1, backend as nodeBackend } from './hmac-node.js';
import { backend as webBackend } from './hmac-web.js';

const text = (value: string): Uint8Array => new TextEncoder().encode(value);

/** Published HMAC-SHA256 vectors, RFC 4231 section 4 (test cases 1, 2 and 6). */
const RFC_4231 = [
  {
    name: 'test case 1',
    key: new Uint8Array(20).fill(0x0b),
    data: text('Hi There'),
    mac: 'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
  },
  {
    name: 'test case 2 (key shorter than the output)',
    key: text('Jefe'),
    data: text('what do ya want for nothing?'),
    mac: '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
  },
  {
    name: 'test case 6 (key longer than the block size)',
    key: new Uint8Array(131).fill(0xaa),
    data: text('Test Using Larger Than Block-Size Key - Hash Key First'),
    mac: '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
  },
];

describe.each([nodeBackend, webBackend])('HMAC back end $name', (backend) => {
  it.each(RFC_4231)('matches RFC 4231 $name', ({ key, data, mac }) => {
    expect(toHex(backend.hmacSha256(key, [data]))).toBe(mac);
  });

  it('matches node:crypto createHmac on any key and any split of the message', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        fc.array(fc.uint8Array({ maxLength: 100 }), { maxLength: 5 }),
        (key, parts) => {
          const independent = createHmac('sha256', key);
          for (const part of parts) independent.update(part);
          expect(toHex(backend.hmacSha256(key, parts))).toBe(independent.digest('hex'));
        },
      ),
    );
  });

  it('hashes a string part as its UTF-8 bytes (lone surrogates as U+FFFD, like TextEncoder)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.string({ unit: 'binary' }), (key, value) => {
        const asText = backend.hmacSha256(key, [value, 'x']);
        const asBytes = backend.hmacSha256(key, [text(value), text('x')]);
        expect(toHex(asText)).toBe(toHex(asBytes));
      }),
    );
  });

  it('matches the right digest among the candidates, and nothing with any byte or the length changed', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 64 }),
        fc.array(fc.uint8Array({ maxLength: 100 }), { maxLength: 3 }),
        fc.nat(),
        fc.nat(31),
        (key, parts, at, position) => {
          const digest = createHmac('sha256', key);
          for (const part of parts) digest.update(part);
          const right = new Uint8Array(digest.digest());
          const changed = Uint8Array.from(right);
          const index = at % changed.length;
          changed[index] = (changed[index]! + 1) % 256;
          const others = [changed, right.subarray(1), new Uint8Array(0), new Uint8Array(33)];
          expect(backend.matchesAny(key, parts, [right])).toBe(true);
          expect(backend.matchesAny(key, parts, others)).toBe(false);
          const mixed = [...others];
          mixed.splice(position % (mixed.length + 1), 0, right);
          expect(backend.matchesAny(key, parts, mixed)).toBe(true);
          expect(backend.matchesAny(key, parts, [])).toBe(false);
        },
      ),
    );
  });
});

describe('constant-time comparisons', () => {
  it('compare equal bytes as equal and any difference or length change as unequal', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.nat(), (bytes, at) => {
        const latin1 = Buffer.from(bytes).toString('latin1');
        const changed = Uint8Array.from(bytes);
        const index = at % changed.length;
        changed[index] = (changed[index]! + 1) % 256;
        expect(constantTimeEqual(bytes, Uint8Array.from(bytes))).toBe(true);
        expect(constantTimeEqual(bytes, changed)).toBe(false);
        expect(constantTimeEqual(bytes, bytes.subarray(1))).toBe(false);
        expect(constantTimeEqualLatin1(latin1, Uint8Array.from(bytes))).toBe(true);
        expect(constantTimeEqualLatin1(latin1, changed)).toBe(false);
        expect(constantTimeEqualLatin1(latin1, bytes.subarray(1))).toBe(false);
      }),
    );
  });

  it('never takes a char code above 0xff for the byte it aliases', () => {
    // U+0141 and U+0041 share their low byte; the digest string would never hold the first.
    expect(constantTimeEqualLatin1('\u0141', new Uint8Array([0x41]))).toBe(false);
    expect(constantTimeEqualLatin1('\u0041', new Uint8Array([0x41]))).toBe(true);
  });
});

describe('hex helpers', () => {
  it('round-trip any bytes and accept upper-case hex', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const hex = toHex(bytes);
        expect(hex).toBe(Buffer.from(bytes).toString('hex'));
        expect(fromHex(hex, bytes.length)).toEqual(bytes);
        expect(fromHex(hex.toUpperCase(), bytes.length)).toEqual(bytes);
      }),
    );
  });

  it('reject the wrong length and non-hex characters', () => {
    expect(fromHex('abc', 2)).toBeUndefined();
    expect(fromHex('zz', 1)).toBeUndefined();
    expect(fromHex('0g', 1)).toBeUndefined();
    expect(fromHex(' a', 1)).toBeUndefined();
  });
});
