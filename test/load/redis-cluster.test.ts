import { describe, expect, it } from 'vitest';
import { runCluster } from './redis-cluster.js';
import { expectNothingLost } from './redis-cluster-checks.js';

/**
 * 3 web processes (`consume: false`), 2 worker processes, one Redis; 10,000 alerts, 20 % of them
 * redelivered to another web process; one worker killed with SIGKILL partway and started again.
 * (redis-cluster-real.test.ts runs the same on a three-master Redis Cluster.)
 */
describe('web and worker processes on one Redis under load, with a worker crash', () => {
  it('handles every alert answered 202; only the killed worker causes a second run', async () => {
    const report = await runCluster({
      alerts: 10_000,
      webs: 3,
      workers: 2,
      redeliveryRate: 0.2,
      killAfter: 4_000,
      seed: 20261123,
    });
    expectNothingLost(report, 10_000, 'redis-cluster');
    expect(report.redelivered).toBeGreaterThan(1500);
  }, 300_000);
});
