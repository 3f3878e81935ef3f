import { describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_RECEIVER_LOGGER,
  isLogThreshold,
  levelEnabled,
  resolveLogger,
  SILENT_LOGGER,
} from './logger.js';

describe('log levels', () => {
  it('lets a record through at or above the threshold; off lets nothing through', () => {
    expect(levelEnabled('warn', 'warn')).toBe(true);
    expect(levelEnabled('error', 'warn')).toBe(true);
    expect(levelEnabled('info', 'warn')).toBe(false);
    expect(levelEnabled('debug', 'debug')).toBe(true);
    expect(levelEnabled('error', 'off')).toBe(false);
  });

  it('knows the thresholds and nothing else', () => {
    for (const value of ['off', 'debug', 'info', 'warn', 'error']) {
      expect(isLogThreshold(value)).toBe(true);
    }
    for (const value of ['trace', 'WARN', '', undefined, 3, 'toString']) {
      expect(isLogThreshold(value)).toBe(false);
    }
  });
});

describe('resolveLogger', () => {
  it('gives the fallback for undefined and refuses what is not a logger', () => {
    expect(resolveLogger(undefined, SILENT_LOGGER)).toBe(SILENT_LOGGER);
    expect(() => resolveLogger('pino', SILENT_LOGGER)).toThrow(TypeError);
    expect(() => resolveLogger({ warn: 'loud' }, SILENT_LOGGER)).toThrow(/logger\.warn/);
  });

  it('calls the methods with their logger as `this`, fields first', () => {
    const calls: unknown[] = [];
    const logger = {
      prefix: 'p',
      warn(this: { prefix: string }, fields: unknown, message: string) {
        calls.push([this.prefix, fields, message]);
      },
    };
    const resolved = resolveLogger(logger, SILENT_LOGGER);
    resolved.warn({ code: 'X' }, 'refused');
    resolved.debug({}, 'absent method: silent');
    expect(calls).toEqual([['p', { code: 'X' }, 'refused']]);
  });

  it('swallows what a logger throws', () => {
    const resolved = resolveLogger(
      {
        error() {
          throw new Error('disk full');
        },
      },
      SILENT_LOGGER,
    );
    expect(() => {
      resolved.error({}, 'x');
    }).not.toThrow();
  });

  it('the receiver default writes errors only, to console.error', () => {
    const spies = (['debug', 'info', 'warn', 'error'] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation(() => undefined),
    );
    try {
      DEFAULT_RECEIVER_LOGGER.debug({}, 'd');
      DEFAULT_RECEIVER_LOGGER.info({}, 'i');
      DEFAULT_RECEIVER_LOGGER.warn({}, 'w');
      DEFAULT_RECEIVER_LOGGER.error({ id: 'a' }, 'e');
      expect(spies.map((spy) => spy.mock.calls.length)).toEqual([0, 0, 0, 1]);
      expect(spies[3]!.mock.calls[0]).toEqual(['[churn-risk] e', { id: 'a' }]);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });
});
