import { expect } from 'vitest';
import type { ClusterReport } from './redis-cluster.js';

/**
 * The checks of a multi-process Redis run: every alert answered 202 was handled (0 lost), every
 * redelivery answered duplicate, and a handler ran twice only for alerts the killed worker had.
 */
export function expectNothingLost(report: ClusterReport, alerts: number, label: string): void {
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
    `[${label}] accepted ${report.accepted.length} of ${alerts} (refused ${report.refused}); ` +
      `redelivered ${report.redelivered}, answered duplicate ${report.duplicatesAnswered}; ` +
      `unhandled ${unhandled.length}; ran twice ${twice.length} ` +
      `(killed mid-handler ${diedMidHandler.length}, finished but not acknowledged ${diedBeforeAck.length})`,
  );
  expect(report.refused).toBe(0);
  expect(report.accepted).toHaveLength(alerts);
  expect(new Set(report.accepted).size).toBe(alerts);
  expect(unhandled).toEqual([]);
  expect(report.redeliveriesNotDuplicate).toEqual([]);
  expect(report.duplicatesAnswered).toBe(report.redelivered);
  // The worker was killed with handlers in flight, and each of them ran again elsewhere.
  expect(diedMidHandler.length).toBeGreaterThan(0);
  // A handler ran twice only for alerts the killed worker had taken, and never three times.
  expect(twice.length).toBe(diedMidHandler.length + diedBeforeAck.length);
  for (const [id, lines] of twice) {
    expect(lines.filter(([k]) => k === 'start').length, id).toBe(2);
  }
  expect(report.workerExitCodes.every((code) => code === 0)).toBe(true);
  expect(report.webExitCodes.every((code) => code === 0)).toBe(true);
}
