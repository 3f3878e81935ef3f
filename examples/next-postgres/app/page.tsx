import type { ReactNode } from 'react';
import { exampleApp } from '../lib/receiver';

export const dynamic = 'force-dynamic';

/** The latest handler runs and onError calls, from the run log in the queue's database. */
export default async function RunsPage(): Promise<ReactNode> {
  const runs = await exampleApp().runs.list(undefined, 50);
  return (
    <main>
      <h1>Churn-risk alert runs</h1>
      {runs.length === 0 ? (
        <p>No alert handled yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>alert</th>
              <th>what</th>
              <th>server</th>
              <th>attempt</th>
              <th>stalls</th>
              <th>outcome</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((run) => (
              <tr key={run.id} data-alert-id={run.alertId}>
                <td>{run.alertId}</td>
                <td>{run.kind}</td>
                <td>{run.instance}</td>
                <td>{run.attempt}</td>
                <td>{run.stalls}</td>
                <td>{run.outcome}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
