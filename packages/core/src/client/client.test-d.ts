import { describe, expectTypeOf, it } from 'vitest';
import type {
  AtRiskUser,
  ChurnRiskClient,
  ClientOptions,
  CooldownString,
  ErrorCode,
  EventBatcher,
  RiskTier,
  ServiceError,
  WatchOptions,
} from '@churn-risk/core';

describe('client types', () => {
  it('names the doc types', () => {
    expectTypeOf<RiskTier>().toEqualTypeOf<'low' | 'medium' | 'high'>();
    expectTypeOf<'QUEUE_OVERFLOW'>().toExtend<ErrorCode>();
    expectTypeOf<'SOME_SERVICE_CODE'>().toExtend<ErrorCode>();
    expectTypeOf<ServiceError['status']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<'24h'>().toExtend<CooldownString>();
    expectTypeOf<'24m'>().not.toExtend<CooldownString>();
    expectTypeOf<'1.5h'>().not.toExtend<CooldownString>();
    expectTypeOf<'7d'>().toExtend<CooldownString>();
    expectTypeOf<WatchOptions['cooldown']>().toEqualTypeOf<CooldownString>();
  });

  it('types the methods', () => {
    expectTypeOf<ChurnRiskClient['getAllAtRiskUsers']>().returns.toExtend<
      AsyncIterable<AtRiskUser>
    >();
    expectTypeOf<ChurnRiskClient['createBatcher']>().returns.toEqualTypeOf<EventBatcher>();
    expectTypeOf<EventBatcher['flush']>().returns.toEqualTypeOf<Promise<number>>();
    expectTypeOf<ChurnRiskClient['identify']>().parameter(1).toHaveProperty('plan');
  });

  it('lets every option, the key included, come from the environment', () => {
    expectTypeOf<[]>().toExtend<ConstructorParameters<typeof ChurnRiskClient>>();
    expectTypeOf<ClientOptions['apiKey']>().toEqualTypeOf<string | undefined>();
  });
});
