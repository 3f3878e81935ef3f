import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { SandboxClock } from '../clock/clock.js';
import { isManualClock } from '../clock/time-travel.js';
import { ApiError } from '../server/api-error.js';
import { parseInput } from './parse-input.js';

/** The answer of the clock routes. */
export interface ClockState {
  /** `manual`: moved only by `POST /v1/sandbox/clock`; `system`: the real time. */
  mode: 'manual' | 'system';
  /** The sandbox's time, ISO 8601 UTC. */
  now: string;
}

/** Longest single step: one year. */
const MAX_ADVANCE_MS = 366 * 24 * 3_600_000;
const advanceSchema = z.strictObject({
  advanceMs: z.number().int().min(0).max(MAX_ADVANCE_MS),
});

/** The current clock state. */
export function clockState(clock: SandboxClock): ClockState {
  return {
    mode: isManualClock(clock) ? 'manual' : 'system',
    now: new Date(clock.now()).toISOString(),
  };
}

/**
 * `GET /v1/sandbox/clock` (200 ClockState) and `POST /v1/sandbox/clock {"advanceMs":n}`: time
 * travel on a manual clock (200 ClockState once due retries have run); 409 `CONFLICT` on the
 * system clock.
 */
export function registerClockRoute(
  app: FastifyInstance,
  clock: SandboxClock,
  advance: (ms: number) => Promise<unknown>,
): void {
  app.get('/v1/sandbox/clock', () => clockState(clock));
  app.post('/v1/sandbox/clock', async (request) => {
    const { advanceMs } = parseInput(advanceSchema, request.body, 'clock request');
    if (!isManualClock(clock)) {
      throw new ApiError(
        'CONFLICT',
        'The sandbox runs on the system clock; start it with a manual clock (--clock manual) to travel in time.',
      );
    }
    await advance(advanceMs);
    return clockState(clock);
  });
}
