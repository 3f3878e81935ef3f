import { describeDurableDemo } from '@churn-risk/example-durable-demo/testing';

describeDurableDemo({
  command: 'demo:redis',
  script: 'examples/redis/src/demo.ts',
  missing: {
    what: 'redis-server',
    env: { REDIS_SERVER: '/nonexistent/redis-server' },
    install: 'apt-get update && apt-get install -y redis-server',
  },
  opsPage: true,
});
