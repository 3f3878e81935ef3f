import { afterEach, describe, expect, it, vi } from 'vitest';

// Next's `after()` only works inside a Next request; here it is replaced to observe how
// `keepAlive` reacts to each of its behaviours. The real `after()` is exercised by the example's
// `next start` test.
const afterMock = vi.hoisted(() => vi.fn<(task: unknown) => void>());
vi.mock('next/server.js', () => ({ after: afterMock }));

const { keepAlive } = await import('./keep-alive.js');

afterEach(() => {
  afterMock.mockReset();
});

describe('keepAlive', () => {
  it('hands the work to after() inside a Next request and not to waitUntil', () => {
    const waitUntil = vi.fn();
    const done = Promise.resolve();
    keepAlive(done, waitUntil);
    expect(afterMock).toHaveBeenCalledWith(done);
    expect(waitUntil).not.toHaveBeenCalled();
  });

  it('falls back to waitUntil when after() says it is outside a request scope', () => {
    afterMock.mockImplementation(() => {
      throw new Error(
        '`after` was called outside a request scope. Read more: https://nextjs.org/docs/messages/next-dynamic-api-wrong-context',
      );
    });
    const waitUntil = vi.fn();
    const done = Promise.resolve();
    keepAlive(done, waitUntil);
    expect(waitUntil).toHaveBeenCalledWith(done);
  });

  it('does not throw outside a request scope when there is no waitUntil', () => {
    afterMock.mockImplementation(() => {
      throw new Error('`after` was called outside a request scope.');
    });
    expect(() => {
      keepAlive(Promise.resolve(), undefined);
    }).not.toThrow();
  });

  it('falls back to waitUntil on any other after() failure, never failing an accepted alert', () => {
    afterMock.mockImplementation(() => {
      throw new Error(
        '`after()` will not work correctly, because `waitUntil` is not available in the current environment.',
      );
    });
    const waitUntil = vi.fn();
    const done = Promise.resolve();
    expect(() => {
      keepAlive(done, waitUntil);
    }).not.toThrow();
    expect(waitUntil).toHaveBeenCalledWith(done);
  });

  it("makes after()'s refusal without a stack trace and restores Error.stackTraceLimit", () => {
    const limit = Error.stackTraceLimit;
    let made: Error | undefined;
    afterMock.mockImplementation(() => {
      made = new Error('`after` was called outside a request scope.');
      throw made;
    });
    let limitInWaitUntil: number | undefined;
    keepAlive(Promise.resolve(), () => {
      limitInWaitUntil = Error.stackTraceLimit;
    });
    // The stack is the message line alone: no frame was captured for an error nobody sees.
    expect(made?.stack?.split('\n')).toHaveLength(1);
    expect(limitInWaitUntil).toBe(limit);
    expect(Error.stackTraceLimit).toBe(limit);
    afterMock.mockReset();
    keepAlive(Promise.resolve(), undefined);
    expect(Error.stackTraceLimit).toBe(limit);
  });
});
