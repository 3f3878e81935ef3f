import { describe, expect, it } from 'vitest';
import { fromTraceCarrier, toTraceCarrier } from './trace-carrier.js';

const context = {
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  spanId: '00f067aa0ba902b7',
  traceFlags: 1,
};

describe('trace carrier (W3C traceparent)', () => {
  it('round-trips a span context, marked remote', () => {
    const carrier = toTraceCarrier(context);
    expect(carrier).toEqual({
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    });
    expect(fromTraceCarrier(carrier)).toEqual({ ...context, isRemote: true });
  });

  it('keeps a non-empty tracestate', () => {
    const traceState = { serialize: () => 'vendor=abc' } as never;
    expect(toTraceCarrier({ ...context, traceState }).tracestate).toBe('vendor=abc');
  });

  it.each([
    ['nothing', undefined],
    ['no traceparent', {}],
    ['a number', { traceparent: 1 }],
    ['another version', { traceparent: '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }],
    ['upper-case hex', { traceparent: '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01' }],
    ['a zero trace id', { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` }],
    ['a zero span id', { traceparent: `00-4bf92f3577b34da6a3ce929d0e0e4736-${'0'.repeat(16)}-01` }],
    ['trailing text', { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x' }],
  ])('reads %s as no link', (_name, carrier) => {
    expect(fromTraceCarrier(carrier)).toBeUndefined();
  });
});
