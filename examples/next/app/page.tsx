import type { ReactNode } from 'react';
import { listAlerts } from '../lib/alert-store';

export const dynamic = 'force-dynamic';

/** Lists the alerts the Node.js webhook routes have processed since the server started. */
export default function AlertsPage(): ReactNode {
  const alerts = listAlerts();
  return (
    <main>
      <h1>Churn-risk alerts</h1>
      {alerts.length === 0 ? (
        <p>No alert received yet.</p>
      ) : (
        <ul>
          {alerts.map(({ id, route, alert }) => (
            <li key={`${route}:${id}`} data-alert-id={id}>
              <strong>{alert.userId}</strong> {alert.tier} ({alert.score.toFixed(2)}) via {route}:{' '}
              {alert.recommendation}
            </li>
          ))}
        </ul>
      )}
    </main>
  );
}
