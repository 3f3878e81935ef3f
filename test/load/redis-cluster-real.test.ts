import { describe, expect, it } from 'vitest';
import { runCluster } from './redis-cluster.js';
import { expectNothingLost } from './redis-cluster-checks.js';

/**
 * Durable processing on a real three-master Redis Cluster (redis-server --cluster-enabled yes, joined with
 * redis-cli --cluster create, prefix `{cluster}`): 3 web processes, 2 worker processes connected
 * with an ioredis `Cluster`; 3,000 alerts, 20 % redelivered to another web process; one worker
 * SIGKILLed mid-handler and started again. 0 alerts lost.
 */
describe('web and worker processes on a Redis Cluster under load, with a worker crash', () => {
  it('handles every alert answered 202; only the killed worker causes a second run', async () => {
    const report = await runCluster({
      alerts: 3_000,
      webs: 3,
      workers: 2,
      redeliveryRate: 0.2,
      killAfter: 1_200,
      seed: 20261124,
      redisCluster: true,
    });
    expectNothingLost(report, 3_000, 'redis-cluster-real');
    expect(report.redelivered).toBeGreaterThan(400);
  }, 300_000);
});
