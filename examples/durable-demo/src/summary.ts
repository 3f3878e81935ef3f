import type { Sandbox } from '@churn-risk/sandbox';
import type { Redelivered } from './redeliver.js';
import { tally, type Runs, type Tally } from './tally.js';
import { waitFor } from './wait-for.js';

/** The figures the demo ends with. */
export interface Summary {
  tally: Tally;
  runs: Runs;
  redelivered: Redelivered;
}

/**
 * Waits until every alert the sandbox delivered (answered 202) has its record in the worker's
 * store. On time-out the error says how many are missing.
 */
export async function waitUntilHandled(
  sandbox: Sandbox,
  file: string,
  timeoutMs = 40_000,
): Promise<{ tally: Tally; seconds: string }> {
  const started = Date.now();
  let last = tally(sandbox.deliveries.list(), file);
  try {
    const done = await waitFor(
      () => {
        last = tally(sandbox.deliveries.list(), file);
        return last.missing.length === 0 ? last : undefined;
      },
      { timeoutMs, what: 'every delivered alert to be handled' },
    );
    return { tally: done, seconds: ((Date.now() - started) / 1000).toFixed(1) };
  } catch (error) {
    const example = last.missing.slice(0, 3).join(', ');
    const detail = `${last.missing.length} of ${last.delivered.length} delivered alerts were never handled (e.g. ${example})`;
    throw new Error(`${(error as Error).message} ${detail}.`, { cause: error });
  }
}

/** The report lines of a summary. */
export function summaryLines({ tally: result, runs, redelivered }: Summary): string[] {
  const handled = result.delivered.length - result.missing.length;
  return [
    `alerts delivered (202):   ${result.delivered.length}`,
    `alerts handled:           ${handled}`,
    `handler runs:             ${runs.total}`,
    `re-runs after the crash:  ${runs.reruns} (${runs.noops} of them found the alert already recorded)`,
    `duplicates:               ${result.duplicates} alerts recorded twice; ${redelivered.duplicates} redeliveries answered duplicate`,
  ];
}
