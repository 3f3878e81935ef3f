#!/usr/bin/env node
/**
 * The `churn-risk-sqs` bin: `churn-risk-sqs failed list|retry [ID|--all] --queue-url <url>
 * --table <name>`.
 */
import { runFailedCliBin } from '@churn-risk/core/cli';
import { SQS_CLI } from './failed-cli.js';

await runFailedCliBin(SQS_CLI);
