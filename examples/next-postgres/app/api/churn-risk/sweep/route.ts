import { createSweepHandler } from '@churn-risk/next';
import { exampleApp } from '../../../../lib/receiver';

// The cron route (vercel.json: every minute): with `Authorization: Bearer <CRON_SECRET>`, runs the
// retries that fell due and takes over the alerts of a function that stopped mid-run; 401 otherwise.
export const dynamic = 'force-dynamic';
export const maxDuration = 60;

let sweep: ((request: Request) => Promise<Response>) | undefined;

export function GET(request: Request): Promise<Response> {
  const { receiver, settings } = exampleApp();
  sweep ??= createSweepHandler(receiver, { budgetMs: settings.sweepBudgetMs });
  return sweep(request);
}
