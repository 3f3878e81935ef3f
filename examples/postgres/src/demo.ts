/**
 * `pnpm demo:postgres`: the sandbox, a real PostgreSQL 15 cluster of its own, two web processes
 * and one worker process (both on Node >= 22.12, which pg-boss 12 needs: see `demo/node-binary.ts`).
 * Many watched users cross their threshold, the worker is killed with SIGKILL mid-alert and
 * started again, and the demo checks that every alert the sandbox delivered was handled. Exits 0
 * when it was, non-zero otherwise; every process it started is stopped on the way out.
 */
import { createReport } from './demo/report.js';
import { Resources } from './demo/resources.js';
import { runScenario } from './demo/scenario.js';
import { PostgresMissingError } from './demo/start-postgres.js';
import { summaryLines } from './demo/summary.js';

const report = createReport();
const resources = new Resources();
process.once('exit', () => {
  resources.killNow();
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the demo`);
    process.exit(130); // the 'exit' listener kills every process the demo started
  });
}

let verdict: string | undefined;
try {
  const summary = await runScenario(report, resources);
  console.log('');
  for (const line of summaryLines(summary)) console.log(line);
  const { tally } = summary;
  if (tally.missing.length > 0) report.fail(`${tally.missing.length} alerts were never handled`);
  if (tally.duplicates > 0) report.fail(`${tally.duplicates} alerts were handled twice`);
  if (report.failures === 0) verdict = 'every alert was handled';
} catch (error) {
  if (error instanceof PostgresMissingError) {
    console.error(error.message);
  } else {
    report.fail(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  }
} finally {
  await resources.close();
}

if (verdict !== undefined) {
  console.log(verdict);
  process.exit(0);
}
console.log(`\ndemo FAILED${report.failures > 0 ? ` (${report.failures} failed checks)` : ''}`);
process.exit(1);
