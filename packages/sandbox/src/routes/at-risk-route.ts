import { wire } from '@churn-risk/core';
import type { FastifyInstance } from 'fastify';
import type { ChurnRiskService } from '../service/churn-risk-service.js';
import { parseInput } from './parse-input.js';

type RawQuery = Partial<Record<'threshold' | 'plan' | 'limit' | 'offset', string | string[]>>;

/** A query value as a number: absent stays absent; anything but one finite number fails validation. */
function toNumber(value: string | string[] | undefined): unknown {
  if (value === undefined || Array.isArray(value)) return value;
  return value.trim() === '' ? value : Number(value);
}

/**
 * `GET /v1/at-risk?threshold=&plan=&limit=&offset=`: users with score >= threshold, highest first,
 * ties by userId; defaults threshold 0.5, limit 50, offset 0.
 */
export function registerAtRiskRoute(app: FastifyInstance, service: ChurnRiskService): void {
  app.get<{ Querystring: RawQuery }>('/v1/at-risk', (request) => {
    const raw = request.query;
    const query = parseInput(
      wire.atRiskQuerySchema,
      {
        threshold: toNumber(raw.threshold),
        plan: raw.plan,
        limit: toNumber(raw.limit),
        offset: toNumber(raw.offset),
      },
      'at-risk query',
    );
    return service.atRisk(query);
  });
}
