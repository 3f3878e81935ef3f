#!/usr/bin/env node
/** The `churn-risk-postgres` bin: `churn-risk-postgres failed list|retry [ID|--all] --database <url>`. */
import { runFailedCliBin } from '@churn-risk/core/cli';
import { POSTGRES_CLI } from './failed-cli.js';

await runFailedCliBin(POSTGRES_CLI);
