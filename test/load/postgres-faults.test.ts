import { describe, expect, it } from 'vitest';
import { runPostgresFaults } from './postgres-faults.js';

const ALERTS = 10_000;

/**
 * Postgres mode, proof under faults, on a real PostgreSQL 15: 3 web processes (`consume: false`) and 2
 * worker processes (child processes); 10,000 alerts from
 * 32 connections, each resent until answered 202; at 3,000 one worker is SIGKILLed mid-handler
 * and started again; at 6,000 PostgreSQL is stopped with `pg_ctl stop -m immediate` and started
 * again on the same port and data. Every alert answered 202 is handled (0 lost), and a handler ran
 * twice only for alerts the killed worker had taken. Never skipped (CI included): a missing
 * PostgreSQL fails it.
 */
describe('web and worker processes on PostgreSQL under load, a worker killed and Postgres crashed', () => {
  it('handles every alert answered 202; only the killed worker causes a second run', async () => {
    const report = await runPostgresFaults({
      alerts: ALERTS,
      webs: 3,
      workers: 2,
      senders: 32,
      killAfter: 3_000,
      crashAfter: 6_000,
      downMs: 1_000,
      giveUpMs: 240_000,
    });
    const killed = String(report.killedPid);
    const unhandled = report.accepted.filter(
      (id) => !(report.runs.get(id) ?? []).some(([kind]) => kind === 'done'),
    );
    const ranTwice = [...report.runs].filter(
      ([, lines]) => lines.filter(([kind]) => kind === 'start').length > 1,
    );
    const handledTwice = [...report.runs].filter(
      ([, lines]) => lines.filter(([kind]) => kind === 'done').length > 1,
    );
    const byKilled = ([, lines]: [string, [string, string][]]): boolean =>
      lines.some(([kind, pid]) => kind === 'start' && pid === killed);
    const diedMidHandler = ranTwice.filter(
      (entry) =>
        byKilled(entry) && !entry[1].some(([kind, pid]) => kind === 'done' && pid === killed),
    );
    const notByKilled = ranTwice.filter((entry) => !byKilled(entry));
    console.log(
      `[postgres-faults] ${report.accepted.length} of ${ALERTS} answered 202 ` +
        `(${report.acceptedAsDuplicate} of them as duplicate) in ${report.seconds.toFixed(1)} s; ` +
        `refused 503 ${report.refused}, connection errors ${report.connectionErrors} ` +
        `(${report.refusedDuringOutage} around the Postgres outage of ${report.outageMs} ms); ` +
        `unhandled ${unhandled.length}; ran twice ${ranTwice.length} (killed mid-handler ` +
        `${diedMidHandler.length}, not by the killed worker ${notByKilled.length}); ` +
        `handled (finished) twice ${handledTwice.length}`,
    );
    expect(report.unexpected).toEqual([]);
    expect(report.accepted).toHaveLength(ALERTS);
    expect(new Set(report.accepted).size).toBe(ALERTS);
    expect(report.outageMs).toBeGreaterThan(0);
    // The outage was felt: deliveries were refused or failed, and were resent until accepted.
    expect(report.refused + report.connectionErrors).toBeGreaterThan(0);
    expect(unhandled).toEqual([]);
    // The worker was killed with a handler in flight, and it ran again elsewhere.
    expect(diedMidHandler.length).toBeGreaterThan(0);
    // A second run only for alerts the killed worker had taken, and never a third.
    expect(notByKilled.map(([id]) => id)).toEqual([]);
    for (const [id, lines] of ranTwice) {
      expect(lines.filter(([kind]) => kind === 'start').length, id).toBe(2);
    }
    for (const [id, lines] of handledTwice) {
      expect(
        lines.some(([kind, pid]) => kind === 'done' && pid === killed),
        id,
      ).toBe(true);
    }
    expect(report.workerExitCodes.every((code) => code === 0)).toBe(true);
    expect(report.webExitCodes.every((code) => code === 0)).toBe(true);
  }, 420_000);
});
