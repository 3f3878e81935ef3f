import { setTimeout as delay } from 'node:timers/promises';
import { DELIVERY_STATES, type DeliveryFilter } from '../deliveries/delivery-filter.js';
import type { DeliveryRecord } from '../deliveries/delivery-record.js';
import { EXIT, UsageError, type CliIo } from './cli-io.js';
import { CONNECTION_FLAGS, CONNECTION_HELP, connectFromFlags } from './connection-flags.js';
import { deliveriesTable, tryLine } from './format-deliveries.js';
import { parseFlags } from './parse-flags.js';
import { waitForStop } from './wait-for-stop.js';

export const DELIVERIES_HELP = `Usage: churn-risk deliveries [options]

Prints the delivery log of a running sandbox as a table: id, user, state, tries, the last
try's status or error and duration, and the next try.

Options:
  --status <state>   Only deliveries in this state: ${DELIVERY_STATES.join(', ')}
  --user <userId>    Only deliveries of alerts for this user
  --follow           Keep running and print every new try as it happens (Ctrl+C stops)
  --interval <ms>    How often --follow asks the sandbox, in ms (default 500)
${CONNECTION_HELP}
  -h, --help         Show this help
`;

function parseStatus(value: string | undefined): DeliveryFilter['status'] {
  if (value === undefined || DELIVERY_STATES.includes(value as never))
    return value as DeliveryFilter['status'];
  throw new UsageError(`--status must be one of ${DELIVERY_STATES.join(', ')}, got "${value}".`);
}

function parseInterval(value: string | undefined): number {
  if (value === undefined) return 500;
  if (!/^\d+$/.test(value) || Number(value) < 50 || Number(value) > 60_000)
    throw new UsageError(
      `--interval must be a whole number of ms from 50 to 60000, got "${value}".`,
    );
  return Number(value);
}

/** `churn-risk deliveries`: resolves with the exit code (with `--follow`, once stopped). */
export async function deliveriesCommand(
  args: string[],
  io: CliIo,
  stop?: AbortSignal,
): Promise<number> {
  const flags = parseFlags(args, {
    status: { type: 'string' },
    user: { type: 'string' },
    follow: { type: 'boolean' },
    interval: { type: 'string' },
    ...CONNECTION_FLAGS,
    help: { type: 'boolean', short: 'h' },
  });
  if (flags.help === true) {
    io.out(DELIVERIES_HELP);
    return EXIT.ok;
  }
  const filter: DeliveryFilter = { status: parseStatus(flags.status), userId: flags.user };
  if (flags.user === '') throw new UsageError('--user must not be empty.');
  const interval = parseInterval(flags.interval);
  const client = connectFromFlags(flags);
  const first = await client.listDeliveries(filter);
  io.out(deliveriesTable(first));
  if (flags.follow !== true) return EXIT.ok;

  const seen = new Map(first.map((record) => [record.id, record.attempts.length]));
  const stopped = new AbortController();
  void waitForStop(stop).then(() => {
    stopped.abort();
  });
  const printNew = (records: DeliveryRecord[]): void => {
    for (const record of records) {
      for (let index = seen.get(record.id) ?? 0; index < record.attempts.length; index++)
        io.out(tryLine(record, index));
      seen.set(record.id, record.attempts.length);
    }
  };
  const isStopped = (): boolean => stopped.signal.aborted;
  while (!isStopped()) {
    await delay(interval, undefined, { signal: stopped.signal }).catch(() => undefined);
    if (isStopped()) break;
    printNew(await client.listDeliveries(filter));
  }
  return EXIT.ok;
}
