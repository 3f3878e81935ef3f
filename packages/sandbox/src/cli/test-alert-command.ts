import type { DeliveryRecord } from '../deliveries/delivery-record.js';
import { EXIT, UsageError, type CliIo } from './cli-io.js';
import {
  CONNECTION_FLAGS,
  CONNECTION_HELP,
  connectFromFlags,
  SandboxContactError,
} from './connection-flags.js';
import { printable } from './format-deliveries.js';
import { parseCommand } from './parse-flags.js';
import { reportFirstTry } from './replay-command.js';

export const TEST_ALERT_HELP = `Usage: churn-risk test-alert <userId> [options]

Asks a running sandbox for a test alert to the webhook of the user's watch, as the dashboard's
"Send test alert" does: a churn_risk_alert built from the user's current risk, signed with the
sandbox's secret (the watch's cooldown does not apply). Waits up to 12 s for its first try and
prints it. Exits 0 when the receiver answered 2xx, 1 otherwise (also when the user has no watch).

Options:
${CONNECTION_HELP}
  -h, --help         Show this help
`;

/** `churn-risk test-alert <userId>`: resolves with the exit code. */
export async function testAlertCommand(args: string[], io: CliIo): Promise<number> {
  const { values: flags, positionals } = parseCommand(
    args,
    { ...CONNECTION_FLAGS, help: { type: 'boolean', short: 'h' } },
    1,
  );
  if (flags.help === true) {
    io.out(TEST_ALERT_HELP);
    return EXIT.ok;
  }
  const [userId] = positionals;
  if (userId === undefined || userId === '') throw new UsageError('the user id is required.');
  const sandbox = connectFromFlags(flags);
  let record: DeliveryRecord;
  try {
    record = await sandbox.sendTestAlert(userId);
  } catch (error) {
    if (!(error instanceof SandboxContactError) || error.code !== 'NOT_FOUND') throw error;
    io.err(
      `churn-risk test-alert: user "${printable(userId)}" has no watch in the sandbox at ${sandbox.url}; ` +
        'create one first (client.watch(userId, { threshold, webhook, cooldown })).\n',
    );
    return EXIT.failed;
  }
  io.out(
    `Test alert for ${printable(userId)} (score ${record.alert.score}, ${record.alert.tier}) ` +
      `as ${record.id} to ${printable(record.webhook)}\n`,
  );
  return reportFirstTry(sandbox, record.id, io);
}
