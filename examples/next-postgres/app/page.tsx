import { connection } from 'next/server';
import { Suspense, type ReactNode } from 'react';
import { exampleApp } from '../lib/receiver';

/** The latest handler runs and onError calls, from the run log in the queue's database. */
export default function RunsPage(): ReactNode {
  return (
    <main>
      <h1>Churn-risk alert runs</h1>
      <Suspense fallback={<p>Loading the run log…</p>}>
        <Runs />
      </Suspense>
    </main>
  );
}

async function Runs(): Promise<ReactNode> {
  // Read at request time (never prerendered by `next build`, which has no database).
  await connection();
  const runs = await exampleApp().runs.list(undefined, 50);
  if (runs.length === 0) return <p>No alert handled yet.</p>;
  return (
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
  );
}
