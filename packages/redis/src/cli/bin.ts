#!/usr/bin/env node
/** The `churn-risk-redis` bin: `churn-risk-redis failed list|retry [ID|--all] --redis <url>`. */
import { runFailedCliBin } from '@churn-risk/core/cli';
import { REDIS_CLI } from './failed-cli.js';

await runFailedCliBin(REDIS_CLI);
