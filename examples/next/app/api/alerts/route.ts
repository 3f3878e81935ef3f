import { listAlerts } from '../../../lib/alert-store';

export const dynamic = 'force-dynamic';

/** The alerts the Node.js routes (App Router and Pages Router) have processed, newest first. */
export function GET(): Response {
  return Response.json({ alerts: listAlerts() });
}
