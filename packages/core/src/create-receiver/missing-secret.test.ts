import { createServer } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createQueueReceiver, createReceiver, createVerifier, verifySignature } from '../index.js';
import { receiverFailureResult } from '../adapter.js';
import { createDurableQueue, createMemoryStore } from '../store.js';
import { signPayload } from '../testing.js';
import {
  expectSecretError,
  KEPT_SECRET,
  LAMBDA_HINT,
  NODE_HINT,
  UNSET_SECRETS,
} from '../../../../test/support/secret-hint.js';

// A receiver made with an unset or empty secret (`process.env.CHURN_RISK_WEBHOOK_SECRET!` unset)
// throws a TypeError at creation that names the variable and how to set it where the code runs,
// and never a value.

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('a missing or empty secret', () => {
  describe.each(UNSET_SECRETS)('%s', (_name, secret) => {
    it('node:http (receiver.node): names CHURN_RISK_WEBHOOK_SECRET and the process environment', () => {
      const env: Record<string, unknown> = { CHURN_RISK_WEBHOOK_SECRET: secret };
      expectSecretError(() => {
        const receiver = createReceiver({ secret: env.CHURN_RISK_WEBHOOK_SECRET as string });
        createServer((req, res) => void receiver.node(req, res));
      }, NODE_HINT);
    });

    it('createQueueReceiver, signPayload, verifySignature and createVerifier: the same', () => {
      const s = secret as string;
      const queue = createDurableQueue(createMemoryStore());
      expectSecretError(() => createQueueReceiver({ secret: s, queue }), NODE_HINT);
      expectSecretError(() => signPayload({ body: '{}', secret: s }), NODE_HINT);
      const delivery = { body: '{}', signature: 'sha256=00', timestamp: '1' };
      expectSecretError(() => verifySignature({ ...delivery, secret: s }), NODE_HINT);
      expectSecretError(() => createVerifier({ secret: s }), NODE_HINT);
    });

    it('on AWS Lambda: names the function configuration instead', () => {
      vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'churn-risk-webhook');
      const error = expectSecretError(
        () => createReceiver({ secret: secret as string }),
        LAMBDA_HINT,
      );
      expect(error.message).not.toContain('node --env-file');
    });
  });

  it('a secret that is not a string (a number, null, an object) is refused the same way', () => {
    for (const secret of [42, null, { value: KEPT_SECRET }, [[KEPT_SECRET]]]) {
      expectSecretError(() => createReceiver({ secret: secret as never }), NODE_HINT);
    }
  });

  it('an empty array of secrets too', () => {
    expectSecretError(() => createReceiver({ secret: [] }), NODE_HINT);
  });
});

describe('receiverFailureResult (a receiver function that threw, in an adapter)', () => {
  const FIX = 'with the platform command';

  function answer(error: unknown): { status: number; message: string; logged: unknown[][] } {
    const logged: unknown[][] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      logged.push(args);
    });
    try {
      const result = receiverFailureResult(error, 'handler', FIX);
      const body = JSON.parse(result.body) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('INTERNAL_ERROR');
      return { status: result.status, message: body.error.message, logged };
    } finally {
      spy.mockRestore();
    }
  }

  it("puts the adapter's fix in place of the process environment for a missing secret", () => {
    let thrown: unknown;
    try {
      createReceiver({ secret: '' });
    } catch (error) {
      thrown = error;
    }
    const { status, message, logged } = answer(thrown);
    expect(status).toBe(500);
    expect(message).toBe(
      'The handler could not create its churn-risk receiver. A webhook secret is required: set ' +
        `CHURN_RISK_WEBHOOK_SECRET (or the variable you pass as secret) ${FIX}.`,
    );
    expect(logged).toEqual([[message, { code: 'INTERNAL_ERROR', err: thrown }]]);
  });

  it("keeps another TypeError's message, and drops the message of anything else", () => {
    expect(answer(new TypeError('concurrency must be an integer of at least 1.')).message).toBe(
      'The handler could not create its churn-risk receiver. concurrency must be an integer of at least 1.',
    );
    expect(answer(new Error(`db password ${KEPT_SECRET} rejected`)).message).toBe(
      'The handler could not create its churn-risk receiver.',
    );
  });
});
