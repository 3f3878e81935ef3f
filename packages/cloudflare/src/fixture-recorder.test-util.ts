/**
 * Test support for the workers that the workerd tests bundle (`*fixture.test-util.ts`): the
 * bindings of a worker that reports to the test's recorder (workerd.test-util.ts), and the POST
 * that reports.
 */

/** The bindings of a fixture worker that reports to the recorder at `RECORDER_URL`. */
export interface RecorderEnv {
  CHURN_RISK_WEBHOOK_SECRET?: string;
  RECORDER_URL: string;
}

/** POSTs `body` as JSON to `url` (a recorder's path). */
export const post = (url: string, body: unknown): Promise<Response> =>
  fetch(url, { method: 'POST', body: JSON.stringify(body) });
