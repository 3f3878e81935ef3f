import { describe, expect, it } from 'vitest';
import { runSqsLoad } from './sqs-load.js';

// Proof under faults: 3 producer processes and 2 consumer processes on one SQS queue
// (fauxqs) and its DynamoDB tables (dynalite), 5,000 alerts from 32 senders that resend what was
// refused (one producer's SQS refuses every 25th send), a consumer SIGKILLed mid-batch and restarted. Run by test/load/sqs-load.test.ts with
// packages/lambda/vitest.config.ts (the AWS SDK does not load under the root config).

describe('queue mode under load and a consumer killed mid-batch', () => {
  it('handles every alert answered 202, none twice except those of the killed batch', async () => {
    const report = await runSqsLoad({
      alerts: 5_000,
      producers: 3,
      consumers: 2,
      killAfter: 2_000,
    });
    console.log(
      `sqs load: ${report.accepted.size} accepted, ${report.refused} refused and resent, ` +
        `killed consumer ${report.killedPid}`,
    );
    expect(report.accepted.size).toBe(5_000);
    // One producer refuses every 25th send: resent, then accepted elsewhere, never a duplicate.
    expect(report.refused).toBeGreaterThan(0);
    expect(report.duplicates).toBe(0);
    expect(report.killedPid).toBeGreaterThan(0);
    const killed = String(report.killedPid);
    const unhandled = [...report.accepted].filter(
      (id) => (report.runs.get(id)?.done.length ?? 0) === 0,
    );
    expect(unhandled).toEqual([]);
    // Twice: only alerts the killed consumer had started (its batch, returned to the queue by SQS).
    const twice = [...report.runs].filter(([, { start }]) => start.length > 1);
    const notKilled = twice.filter(([, { start }]) => !start.includes(killed));
    expect(notKilled.map(([id]) => id)).toEqual([]);
    expect(twice.every(([, { start }]) => start.length === 2)).toBe(true);
    // The killed consumer's batch was handled again by another consumer.
    const killedOnly = [...report.runs].filter(
      ([, { start, done }]) => start.includes(killed) && done.every((pid) => pid === killed),
    );
    expect(killedOnly.filter(([, { done }]) => done.length === 0).map(([id]) => id)).toEqual([]);
    console.log(`sqs load: ${twice.length} handler runs repeated, all from the killed batch`);
    expect(report.errors).toEqual([]);
    expect(report.remaining).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    expect(report.consumerExitCodes.every((code) => code === 0)).toBe(true);
    expect(report.producerExitCodes.every((code) => code === 0)).toBe(true);
  }, 300_000);
});
