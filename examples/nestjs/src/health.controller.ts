import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Receiver, ReceiverHealth } from '@churn-risk/core';
import type { Response } from 'express';
import { CHURN_RISK_RECEIVER } from './tokens.js';

/** Liveness (`GET /health`) and readiness (`GET /healthz`). */
@Controller()
export class HealthController {
  constructor(@Inject(CHURN_RISK_RECEIVER) private readonly receiver: Receiver) {}

  /** `GET /health`: the process answers. */
  @Get('health')
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * `GET /healthz`: 200 while the receiver takes deliveries, 503 once it is closing (or its
   * queue's store stops answering), so that a load balancer stops sending webhooks here.
   */
  @Get('healthz')
  async readiness(@Res({ passthrough: true }) res: Response): Promise<ReceiverHealth> {
    const health = await this.receiver.health();
    res.status(health.ok ? 200 : 503);
    return health;
  }
}
