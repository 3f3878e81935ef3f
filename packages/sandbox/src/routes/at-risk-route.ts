import * as wire from '@churn-risk/core/wire';
import type { FastifyInstance } from 'fastify';
import type { ChurnRiskService } from '../service/churn-risk-service.js';
import { parseInput } from './parse-input.js';

type RawQuery = Partial<Record<'threshold' | 'plan' | 'limit' | 'offset', string | string[]>>;

/** A threshold: a plain decimal (`0.7`, `1`); no sign, exponent, hex or whitespace. */
const DECIMAL = /^\d+(\.\d+)?$/;
/** A limit or offset: plain decimal digits. */
const DIGITS = /^\d+$/;

/**
 * A query value as a number when it is written as `pattern` allows; absent stays absent, and any
 * other value is left as it is, so the schema rejects it (400 VALIDATION_ERROR naming the field).
 */
function toNumber(value: string | string[] | undefined, pattern: RegExp): unknown {
  return typeof value === 'string' && pattern.test(value) ? Number(value) : value;
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
        threshold: toNumber(raw.threshold, DECIMAL),
        plan: raw.plan,
        limit: toNumber(raw.limit, DIGITS),
        offset: toNumber(raw.offset, DIGITS),
      },
      'at-risk query',
    );
    return service.atRisk(query);
  });
}
