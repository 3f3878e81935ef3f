import { setTimeout as delay } from 'node:timers/promises';
import type { DeliveryRecord } from '../deliveries/delivery-record.js';
import { EXIT, UsageError, type CliIo } from './cli-io.js';
import {
  CONNECTION_FLAGS,
  CONNECTION_HELP,
  connectFromFlags,
  SandboxContactError,
  type SandboxConnection,
} from './connection-flags.js';
import { describeTry, printable } from './format-deliveries.js';
import { parseCommand } from './parse-flags.js';

export const REPLAY_HELP = `Usage: churn-risk replay <deliveryId> [options]

Sends a delivery again: a new delivery of the same payload (byte-identical, signed afresh) to
the same webhook, with its own retries. Waits up to 12 s for its first try and prints it.
Exits 0 when the receiver answered 2xx, 1 otherwise.

Options:
${CONNECTION_HELP}
  -h, --help         Show this help
`;

/** Polls the log until the delivery's first try is recorded (or 12 s passed). */
async function firstTry(
  sandbox: SandboxConnection,
  id: string,
): Promise<DeliveryRecord | undefined> {
  for (let waited = 0; waited <= 12_000; waited += 100) {
    const record = (await sandbox.listDeliveries()).find((entry) => entry.id === id);
    if (record && record.attempts.length > 0) return record;
    await delay(100);
  }
  return undefined;
}

/**
 * Waits for a new delivery's first try and prints it (`First try: HTTP 202 (3 ms); delivered`);
 * resolves with the exit code: 0 when the receiver answered 2xx.
 */
export async function reportFirstTry(
  sandbox: SandboxConnection,
  id: string,
  io: CliIo,
): Promise<number> {
  const record = await firstTry(sandbox, id);
  const attempt = record?.attempts[0];
  if (!attempt) {
    io.out('First try still in flight; see "churn-risk deliveries".\n');
    return EXIT.failed;
  }
  io.out(`First try: ${describeTry(attempt)}; ${record.state}\n`);
  return attempt.status !== undefined && attempt.status < 300 && attempt.status >= 200
    ? EXIT.ok
    : EXIT.failed;
}

/** `churn-risk replay <deliveryId>`: resolves with the exit code. */
export async function replayCommand(args: string[], io: CliIo): Promise<number> {
  const { values: flags, positionals } = parseCommand(
    args,
    { ...CONNECTION_FLAGS, help: { type: 'boolean', short: 'h' } },
    1,
  );
  if (flags.help === true) {
    io.out(REPLAY_HELP);
    return EXIT.ok;
  }
  const [id] = positionals;
  if (id === undefined || id === '') throw new UsageError('the delivery id is required.');
  const sandbox = connectFromFlags(flags);
  let replayed: DeliveryRecord;
  try {
    replayed = await sandbox.replay(id);
  } catch (error) {
    if (!(error instanceof SandboxContactError) || error.code !== 'NOT_FOUND') throw error;
    io.err(`churn-risk replay: no delivery "${printable(id)}" at ${sandbox.url}.\n`);
    return EXIT.failed;
  }
  io.out(`Replaying ${id} as ${replayed.id}\n`);
  return reportFirstTry(sandbox, replayed.id, io);
}
