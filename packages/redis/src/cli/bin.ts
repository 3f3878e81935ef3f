#!/usr/bin/env node
/** The `churn-risk-redis` bin: `churn-risk-redis failed list|retry [ID|--all] --redis <url>`. */
import { runFailedCli } from './failed-cli.js';

const code = await runFailedCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
});
// Exit now: a connection to an unreachable Redis may still be retrying in the background.
process.exitCode = code;
process.stdout.write('', () => process.exit(code));
