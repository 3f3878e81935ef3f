import { Controller, Get, Inject } from '@nestjs/common';
import type { ChurnRiskAlert } from '@churn-risk/core';
import type { AlertLog } from './alert-log.js';
import { ALERT_LOG } from './tokens.js';

/** `GET /alerts`: the alerts the handler processed so far (for the demo and the tests). */
@Controller('alerts')
export class AlertsController {
  constructor(@Inject(ALERT_LOG) private readonly log: AlertLog) {}

  @Get()
  list(): { alerts: readonly ChurnRiskAlert[] } {
    return { alerts: this.log.alerts };
  }
}
