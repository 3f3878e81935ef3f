import { createReceiver } from '@churn-risk/core';
import { createRouteHandler } from '@churn-risk/next';

// A default receiver (async mode, dedupe on) with one no-op handler, made once per process.
// The secret duplicates SECRET of bench/src/lib/alert.ts (the runner checks that signed deliveries
// get 202 and deliveries signed with another secret 401); BENCH_SECRET overrides it at run time.
const SECRET = process.env.BENCH_SECRET ?? 'whsec_bench_4f0c2b7e9a1d4c3b8e6f5a2d1c0b9e8f';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

const receiver = createReceiver({ secret: SECRET });
receiver.on('churn_risk_alert', () => {});

export const POST = createRouteHandler(receiver);
