import { createSandbox, credentialProblem } from '../create-sandbox.js';
import type { DeliveryRecord } from '../deliveries/delivery-log.js';
import type { DeliveryAttempt } from '../deliveries/send-attempt.js';
import { EXIT, UsageError, type CliIo } from './cli-io.js';
import { parseFlags, parsePort } from './parse-flags.js';

/** Default port of `churn-risk sandbox`. */
export const DEFAULT_SANDBOX_PORT = 4010;

export const SANDBOX_HELP = `Usage: churn-risk sandbox [options]

Runs a local churn-risk service (REST API, scoring, watches, signed webhook deliveries)
until Ctrl+C. Prints its URL, API key and webhook signing secret.

Options:
  --port <n>                Port to listen on (default ${DEFAULT_SANDBOX_PORT}; 0 picks a free port)
  --host <host>             Host to listen on (default 127.0.0.1)
  --api-key <key>           API key clients must send (default: random sk_test_...)
  --webhook-secret <secret> Secret that signs deliveries (default: random whsec_...)
  -h, --help                Show this help
`;

function describeAttempt(record: DeliveryRecord, attempt: DeliveryAttempt): string {
  const outcome =
    attempt.status === undefined
      ? `error: ${attempt.error ?? 'unknown'}`
      : `HTTP ${attempt.status}`;
  const next = record.nextAttemptAt === null ? record.state : `retry at ${record.nextAttemptAt}`;
  return `delivery ${record.id} (${record.alert.userId}) try ${record.attempts.length} to ${record.webhook}: ${outcome}; ${next}\n`;
}

/** `churn-risk sandbox`: resolves with the exit code once a signal (or `stop`) has closed it. */
export async function sandboxCommand(
  args: string[],
  io: CliIo,
  stop?: AbortSignal,
): Promise<number> {
  const flags = parseFlags(args, {
    port: { type: 'string' },
    host: { type: 'string' },
    'api-key': { type: 'string' },
    'webhook-secret': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (flags.help === true) {
    io.out(SANDBOX_HELP);
    return EXIT.ok;
  }
  for (const [flag, option] of [
    ['api-key', 'apiKey'],
    ['webhook-secret', 'webhookSecret'],
  ] as const) {
    const value = flags[flag];
    const problem = value === undefined ? undefined : credentialProblem(option, value);
    if (problem !== undefined) throw new UsageError(`--${flag}: ${problem}`);
  }
  const sandbox = await createSandbox({
    port: parsePort(flags.port, DEFAULT_SANDBOX_PORT),
    host: flags.host ?? '127.0.0.1',
    ...(flags['api-key'] !== undefined && { apiKey: flags['api-key'] }),
    ...(flags['webhook-secret'] !== undefined && { webhookSecret: flags['webhook-secret'] }),
    onDeliveryAttempt: (record, attempt) => {
      io.out(describeAttempt(record, attempt));
    },
  });
  io.out(
    `churn-risk sandbox running\n  URL:            ${sandbox.url}\n  API key:        ${sandbox.apiKey}\n` +
      `  Webhook secret: ${sandbox.webhookSecret}\nPress Ctrl+C to stop.\n`,
  );
  await new Promise<void>((resolve) => {
    const done = (): void => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
    stop?.addEventListener('abort', done, { once: true });
  });
  await sandbox.close();
  io.out('churn-risk sandbox stopped\n');
  return EXIT.ok;
}
