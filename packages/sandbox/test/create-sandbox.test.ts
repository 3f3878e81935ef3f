import { createManualClock, createSandbox } from '@churn-risk/sandbox';
import { describe, expect, it } from 'vitest';

describe('createSandbox options', () => {
  it.each([
    ['an empty webhookSecret', { webhookSecret: '' }, /webhookSecret must be a non-empty string/],
    ['an empty apiKey', { apiKey: '' }, /apiKey must be a non-empty string/],
    ['an apiKey with whitespace', { apiKey: 'sk test' }, /apiKey must not contain whitespace/],
    [
      'a webhookSecret that is not a string',
      { webhookSecret: 42 as unknown as string },
      /webhookSecret must be a non-empty string/,
    ],
  ])('rejects %s with a TypeError before starting', async (_name, options, message) => {
    const clock = createManualClock();
    const started = createSandbox({ clock, ...options });
    await expect(started).rejects.toThrow(TypeError);
    await expect(started).rejects.toThrow(message);
  });

  it('accepts explicit non-empty credentials', async () => {
    const sandbox = await createSandbox({
      clock: createManualClock(),
      apiKey: 'k',
      webhookSecret: 's',
    });
    try {
      expect([sandbox.apiKey, sandbox.webhookSecret]).toEqual(['k', 's']);
    } finally {
      await sandbox.close();
    }
  });
});
