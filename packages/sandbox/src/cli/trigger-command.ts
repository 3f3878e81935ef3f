import { type ChurnRiskAlert } from '@churn-risk/core';
import { signPayload } from '@churn-risk/core/testing';
import { DELIVERY_POLICY } from '../deliveries/retry-schedule.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../deliveries/send-attempt.js';
import { RECOMMENDATIONS } from '../scoring/signal-table.js';
import { tierFor } from '../scoring/tier.js';
import { applyAlertFields } from './alert-fields.js';
import { EXIT, UsageError, type CliIo } from './cli-io.js';
import { checkedUrl, rootCause } from './connection-flags.js';
import { ENV, fromEnv } from './env-defaults.js';
import { parseFlags } from './parse-flags.js';

export const TRIGGER_HELP = `Usage: churn-risk trigger --url <webhook> [--secret <secret>] [options]

Sends one signed test churn_risk_alert to a webhook, as the service would, and prints the
status, the latency and the body of the answer. Exits 0 on a 2xx answer, 1 otherwise.

Options:
  --url <url>        The webhook URL (required)
  --secret <secret>  The webhook signing secret (default $CHURN_RISK_WEBHOOK_SECRET;
                     one of the two is required)
  --user <userId>    userId of the alert (default user_test_1)
  --score <0..1>     score of the alert (default 0.82); the tier follows from it
  --set <field=value> Set any alert field (repeatable), after --user and --score:
                     --set tier=high --set signals=payment_failed,seat_removed
                     --set score=0.9 (JSON for numbers and new fields, else text)
  -h, --help         Show this help
`;

/** The test alert `trigger` sends. */
export function testAlert(userId: string, score: number, now: number): ChurnRiskAlert {
  return {
    event: 'churn_risk_alert',
    userId,
    score,
    tier: tierFor(score),
    signals: ['payment_failed', 'usage_declining'],
    recommendation: RECOMMENDATIONS.payment_failed,
    triggeredAt: new Date(now).toISOString(),
  };
}

function parseScore(value: string | undefined): number {
  if (value === undefined) return 0.82;
  const score = Number(value);
  if (value.trim() === '' || !Number.isFinite(score) || score < 0 || score > 1) {
    throw new UsageError(`--score must be a number from 0 to 1, got "${value}".`);
  }
  return score;
}

/** `churn-risk trigger`: resolves with the exit code. `env` supplies `CHURN_RISK_WEBHOOK_SECRET`. */
export async function triggerCommand(
  args: string[],
  io: CliIo,
  _stop?: AbortSignal,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const flags = parseFlags(args, {
    url: { type: 'string' },
    secret: { type: 'string' },
    user: { type: 'string' },
    score: { type: 'string' },
    set: { type: 'string', multiple: true },
    help: { type: 'boolean', short: 'h' },
  });
  if (flags.help === true) {
    io.out(TRIGGER_HELP);
    return EXIT.ok;
  }
  if (flags.url === undefined) throw new UsageError('--url is required.');
  const secret = flags.secret ?? fromEnv(env, ENV.webhookSecret);
  if (secret === undefined)
    throw new UsageError(`--secret is required (or set ${ENV.webhookSecret}).`);
  if (secret === '') throw new UsageError('--secret must not be empty.');
  const target = checkedUrl('--url', flags.url).href;
  const userId = flags.user ?? 'user_test_1';
  if (userId === '') throw new UsageError('--user must not be empty.');
  const alert = testAlert(userId, parseScore(flags.score), Date.now());
  const body = JSON.stringify(applyAlertFields(alert, flags.set ?? []));
  const { signature, timestamp } = signPayload({ body, secret });
  const started = performance.now();
  try {
    const response = await fetch(flags.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        [SIGNATURE_HEADER]: signature,
        [TIMESTAMP_HEADER]: timestamp,
      },
      body,
      signal: AbortSignal.timeout(DELIVERY_POLICY.timeoutMs),
    });
    const text = await response.text();
    const latency = Math.round(performance.now() - started);
    io.out(
      `HTTP ${response.status} (${latency} ms)\n${text}${text.endsWith('\n') || text === '' ? '' : '\n'}`,
    );
    if (response.ok) return EXIT.ok;
    io.err(`churn-risk trigger: ${target} answered HTTP ${response.status}; not acknowledged.\n`);
    return EXIT.failed;
  } catch (error) {
    const what =
      error instanceof Error && error.name === 'TimeoutError'
        ? `no answer within ${DELIVERY_POLICY.timeoutMs / 1000} s`
        : rootCause(error);
    io.err(`churn-risk trigger: delivery to ${target} failed: ${what}\n`);
    return EXIT.failed;
  }
}
