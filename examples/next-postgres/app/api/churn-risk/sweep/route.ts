import { createSweepHandler } from '@churn-risk/next';
import { connection } from 'next/server';
import { exampleApp } from '../../../../lib/receiver';

// The cron route (vercel.json: every minute): with `Authorization: Bearer <CRON_SECRET>`, runs the
// retries that fell due and takes over the alerts of a function that stopped mid-run; 401 otherwise.
export const maxDuration = 60;

let sweep: ((request: Request) => Promise<Response>) | undefined;

export async function GET(request: Request): Promise<Response> {
  // A GET route is prerendered by `next build` under cacheComponents unless it waits for a
  // request: the receiver needs the run-time environment (secret, database).
  await connection();
  const { receiver, settings } = exampleApp();
  sweep ??= createSweepHandler(receiver, { budgetMs: settings.sweepBudgetMs });
  return sweep(request);
}
