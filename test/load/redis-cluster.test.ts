import { describe, expect, it } from 'vitest';
import { runCluster } from './redis-cluster.js';

/**
 * 3 web processes (`consume: false`), 2 worker processes, one Redis; 10,000 alerts, 20 % of them
 * redelivered to another web process; one worker killed with SIGKILL partway and started again.
 */
describe('Redis cluster under load with a worker crash', () => {
  it('handles every alert answered 202; only the killed worker causes a second run', async () => {
    const report = await runCluster({
      alerts: 10_000,
      webs: 3,
      workers: 2,
      redeliveryRate: 0.2,
      killAfter: 4_000,
      seed: 20261123,
    });
    const killed = String(report.killedPid);
    const unhandled = report.accepted.filter(
      (id) => !(report.runs.get(id) ?? []).some(([kind]) => kind === 'done'),
    );
    const twice = [...report.runs].filter(
      ([, lines]) => lines.filter(([k]) => k === 'start').length > 1,
    );
    const diedMidHandler = twice.filter(
      ([, lines]) =>
        lines.some(([kind, pid]) => kind === 'start' && pid === killed) &&
        !lines.some(([kind, pid]) => kind === 'done' && pid === killed),
    );
    const diedBeforeAck = twice.filter(([, lines]) =>
      lines.some(([kind, pid]) => kind === 'done' && pid === killed),
    );
    console.log(
      `[redis-cluster] accepted ${report.accepted.length} of 10000 (refused ${report.refused}); ` +
        `redelivered ${report.redelivered}, answered duplicate ${report.duplicatesAnswered}; ` +
        `unhandled ${unhandled.length}; ran twice ${twice.length} ` +
        `(killed mid-handler ${diedMidHandler.length}, finished but not acknowledged ${diedBeforeAck.length})`,
    );
    expect(report.refused).toBe(0);
    expect(report.accepted).toHaveLength(10_000);
    expect(new Set(report.accepted).size).toBe(10_000);
    expect(unhandled).toEqual([]);
    expect(report.redeliveriesNotDuplicate).toEqual([]);
    expect(report.duplicatesAnswered).toBe(report.redelivered);
    expect(report.redelivered).toBeGreaterThan(1500);
    // The worker was killed with handlers in flight, and each of them ran again elsewhere.
    expect(diedMidHandler.length).toBeGreaterThan(0);
    // A handler ran twice only for alerts the killed worker had taken.
    expect(twice.length).toBe(diedMidHandler.length + diedBeforeAck.length);
    for (const [id, lines] of twice) {
      expect(lines.filter(([k]) => k === 'start').length, id).toBe(2);
    }
    // Nothing ran more than twice, no run after a completed one by a live worker.
    expect(report.workerExitCodes.every((code) => code === 0)).toBe(true);
    expect(report.webExitCodes.every((code) => code === 0)).toBe(true);
  }, 300_000);
});
