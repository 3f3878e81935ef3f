import { StoreMissingError, type DemoBackend } from './backend.js';
import { createReport } from './report.js';
import { Resources } from './resources.js';
import { runScenario } from './scenario.js';
import { summaryLines } from './summary.js';

/**
 * The durable demo's main: runs the scenario on `backend`, prints the summary and ends the process,
 * exit code 0 when every alert the sandbox delivered was handled once, 1 otherwise. Every process
 * and server it started is stopped on the way out, also on SIGINT and SIGTERM.
 */
export async function runDurableDemo(backend: DemoBackend): Promise<never> {
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
    const summary = await runScenario(backend, report, resources);
    console.log('');
    for (const line of summaryLines(summary)) console.log(line);
    const { tally } = summary;
    if (tally.missing.length > 0) report.fail(`${tally.missing.length} alerts were never handled`);
    if (tally.duplicates > 0) report.fail(`${tally.duplicates} alerts were handled twice`);
    if (report.failures === 0) verdict = 'every alert was handled';
  } catch (error) {
    if (error instanceof StoreMissingError) {
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
}
