import { describeDurableDemo } from '@churn-risk/example-durable-demo/testing';

describeDurableDemo({
  command: 'demo:postgres',
  script: 'examples/postgres/src/demo.ts',
  missing: {
    what: 'PostgreSQL',
    env: { PG_BIN_DIR: '/nonexistent/postgresql/bin' },
    install: 'apt-get update && apt-get install -y postgresql',
  },
  rerunsAfterCrash: true,
});
