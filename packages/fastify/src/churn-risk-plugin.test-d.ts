import { createReceiver } from '@churn-risk/core';
import Fastify, { type FastifyPluginCallback } from 'fastify';
import { describe, expectTypeOf, it } from 'vitest';
import churnRiskPluginDefault, { churnRiskPlugin, type ChurnRiskPluginOptions } from './index.js';

const receiver = createReceiver({ secret: 'whsec_types' });

describe('churnRiskPlugin types', () => {
  it('is a Fastify plugin with typed options, also as the default export', () => {
    expectTypeOf(churnRiskPlugin).toEqualTypeOf<FastifyPluginCallback<ChurnRiskPluginOptions>>();
    expectTypeOf(churnRiskPluginDefault).toEqualTypeOf(churnRiskPlugin);
  });

  it('checks its options at register', () => {
    const app = Fastify();
    void app.register(churnRiskPlugin, { receiver, path: '/webhooks/churn-risk', prefix: '/v1' });
    // @ts-expect-error the receiver is required
    void app.register(churnRiskPlugin, { path: '/webhooks/churn-risk' });
    // @ts-expect-error the path is required
    void app.register(churnRiskPlugin, { receiver });
    // @ts-expect-error not a receiver
    void app.register(churnRiskPlugin, { receiver: { handle: () => undefined }, path: '/x' });
  });
});
