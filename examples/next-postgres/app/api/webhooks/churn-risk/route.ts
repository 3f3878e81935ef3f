import { createRouteHandler } from '@churn-risk/next';
import { exampleApp } from '../../../../lib/receiver';

// Answers 202 once the alert is committed to the queue, then, inside after(), runs the due alerts
// (this one first) while keepAliveBudgetMs lasts. Created on the first request: `next build` has
// no secret and no database (a POST route is never prerendered).
/** Vercel keeps the function (and its after() work) alive up to this many seconds. */
export const maxDuration = 60;

export function POST(request: Request): Promise<Response> {
  return createRouteHandler(exampleApp().receiver)(request);
}
