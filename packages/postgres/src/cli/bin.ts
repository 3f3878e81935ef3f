#!/usr/bin/env node
/** The `churn-risk-postgres` bin: `churn-risk-postgres failed list|retry [ID|--all] --database <url>`. */
import { runFailedCli } from './failed-cli.js';

const code = await runFailedCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
});
// Exit now: pg-boss or a pool may still hold a timer.
process.exitCode = code;
process.stdout.write('', () => process.exit(code));
