import { createManualClock } from '../clock/manual-clock.js';
import { createSandbox, credentialProblem } from '../create-sandbox.js';
import type { DeliveryRecord } from '../deliveries/delivery-record.js';
import type { DeliveryAttempt } from '../deliveries/send-attempt.js';
import { CHAOS_FLAGS, CHAOS_HELP, chaosFromFlags } from './chaos-flags.js';
import { EXIT, UsageError, type CliIo } from './cli-io.js';
import { ENV, fromEnv } from './env-defaults.js';
import { describeTry, printable } from './format-deliveries.js';
import { parseFlags, parsePort } from './parse-flags.js';
import { waitForStop } from './wait-for-stop.js';

/** Default port of `churn-risk sandbox`. */
export const DEFAULT_SANDBOX_PORT = 4010;

export const SANDBOX_HELP = `Usage: churn-risk sandbox [options]

Runs a local churn-risk service (REST API, scoring, watches, signed webhook deliveries)
until Ctrl+C. Prints its URL, the dashboard's URL (with the API key in its #fragment), the
API key and the webhook signing secret, then every delivery try.

Options:
  --port <n>                Port to listen on (default ${DEFAULT_SANDBOX_PORT}; 0 picks a free port)
  --host <host>             Host to listen on (default 127.0.0.1)
  --api-key <key>           API key clients must send (default $CHURN_RISK_API_KEY, else a
                            random sk_test_...)
  --webhook-secret <secret> Secret that signs deliveries (default $CHURN_RISK_WEBHOOK_SECRET,
                            else a random whsec_...)
  --clock <system|manual>   manual: time stands still until POST /v1/sandbox/clock (or the
                            dashboard) moves it; starts at the current time (default system)
${CHAOS_HELP}
  -h, --help                Show this help
`;

function describeAttempt(record: DeliveryRecord, attempt: DeliveryAttempt): string {
  const next = record.nextAttemptAt === null ? record.state : `retry at ${record.nextAttemptAt}`;
  const user = printable(record.alert.userId);
  return `delivery ${record.id} (${user}) try ${record.attempts.length} to ${record.webhook}: ${describeTry(attempt)}; ${next}\n`;
}

function parseClock(value: string | undefined): 'system' | 'manual' {
  if (value === undefined || value === 'system' || value === 'manual') return value ?? 'system';
  throw new UsageError(`--clock must be system or manual, got "${value}".`);
}

/** A credential of the sandbox and where it came from: its flag, its variable, or neither. */
interface Credential {
  value: string | undefined;
  /** `--api-key`, `CHURN_RISK_API_KEY`... ; `undefined` when neither gave one (a random one). */
  source: string | undefined;
}

/**
 * The flag's value, else the environment variable's; a bad one is a `UsageError` naming the flag
 * or the variable it came from (never the value).
 */
function credential(
  flag: 'api-key' | 'webhook-secret',
  given: string | undefined,
  variable: string,
  env: NodeJS.ProcessEnv,
): Credential {
  const fromVariable = given === undefined ? fromEnv(env, variable) : undefined;
  const found: Credential =
    given !== undefined
      ? { value: given, source: `--${flag}` }
      : { value: fromVariable, source: fromVariable === undefined ? undefined : variable };
  if (found.value === undefined) return found;
  const problem = credentialProblem(flag === 'api-key' ? 'apiKey' : 'webhookSecret', found.value);
  if (problem !== undefined) throw new UsageError(`${found.source ?? ''}: ${problem}`);
  return found;
}

/** ` (from $CHURN_RISK_API_KEY)` when the value came from the environment. */
function origin(found: Credential): string {
  return found.source !== undefined && !found.source.startsWith('--')
    ? ` (from $${found.source})`
    : '';
}

/**
 * `churn-risk sandbox`: resolves with the exit code once a signal (or `stop`) has closed it.
 * `env` supplies `CHURN_RISK_API_KEY` and `CHURN_RISK_WEBHOOK_SECRET` for absent flags.
 */
export async function sandboxCommand(
  args: string[],
  io: CliIo,
  stop?: AbortSignal,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const flags = parseFlags(args, {
    port: { type: 'string' },
    host: { type: 'string' },
    'api-key': { type: 'string' },
    'webhook-secret': { type: 'string' },
    clock: { type: 'string' },
    ...CHAOS_FLAGS,
    help: { type: 'boolean', short: 'h' },
  });
  if (flags.help === true) {
    io.out(SANDBOX_HELP);
    return EXIT.ok;
  }
  const apiKey = credential('api-key', flags['api-key'], ENV.apiKey, env);
  const webhookSecret = credential(
    'webhook-secret',
    flags['webhook-secret'],
    ENV.webhookSecret,
    env,
  );
  const clock = parseClock(flags.clock);
  const chaos = chaosFromFlags(flags);
  const sandbox = await createSandbox({
    ...(clock === 'manual' && { clock: createManualClock(Date.now()) }),
    chaos,
    port: parsePort(flags.port, DEFAULT_SANDBOX_PORT),
    host: flags.host ?? '127.0.0.1',
    ...(apiKey.value !== undefined && { apiKey: apiKey.value }),
    ...(webhookSecret.value !== undefined && { webhookSecret: webhookSecret.value }),
    onDeliveryAttempt: (record, attempt) => {
      io.out(describeAttempt(record, attempt));
    },
  });
  const chaosNote =
    Object.keys(chaos).length > 0 ? `  Chaos:          ${JSON.stringify(chaos)}\n` : '';
  io.out(
    `churn-risk sandbox running\n  URL:            ${sandbox.url}\n` +
      `  Dashboard:      ${sandbox.dashboardUrl}\n` +
      `  API key:        ${sandbox.apiKey}${origin(apiKey)}\n` +
      `  Webhook secret: ${sandbox.webhookSecret}${origin(webhookSecret)}\n` +
      `  Clock:          ${clock}\n${chaosNote}` +
      'Press Ctrl+C to stop.\n',
  );
  await waitForStop(stop);
  await sandbox.close();
  io.out('churn-risk sandbox stopped\n');
  return EXIT.ok;
}
