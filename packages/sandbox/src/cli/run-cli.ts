import { EXIT, UsageError, type CliIo } from './cli-io.js';
import { SandboxContactError } from './connection-flags.js';
import { DELIVERIES_HELP, deliveriesCommand } from './deliveries-command.js';
import { REPLAY_HELP, replayCommand } from './replay-command.js';
import { SANDBOX_HELP, sandboxCommand } from './sandbox-command.js';
import { TEST_ALERT_HELP, testAlertCommand } from './test-alert-command.js';
import { TRIGGER_HELP, triggerCommand } from './trigger-command.js';

export const TOP_HELP = `Usage: churn-risk <command> [options]

Commands:
  sandbox     Run a local churn-risk service (prints its URL, dashboard, API key and secret)
  trigger     Send one signed test alert (any field with --set) and print the answer and latency
  deliveries  Print a running sandbox's delivery log (--follow for new tries as they happen)
  replay      Send a delivery of a running sandbox again
  test-alert  Ask a running sandbox for a test alert to a user's watch and print its first try

Run "churn-risk <command> --help" for the options of a command. Without installing the
package: npx @churn-risk/sandbox <command> (or npx -p @churn-risk/sandbox churn-risk <command>).
Failed alerts of a Redis queue: churn-risk-redis failed list|retry (in @churn-risk/redis).
`;

const COMMANDS: Record<
  string,
  { run: (args: string[], io: CliIo, stop?: AbortSignal) => Promise<number>; help: string }
> = {
  sandbox: { run: sandboxCommand, help: SANDBOX_HELP },
  trigger: { run: triggerCommand, help: TRIGGER_HELP },
  deliveries: { run: deliveriesCommand, help: DELIVERIES_HELP },
  replay: { run: replayCommand, help: REPLAY_HELP },
  'test-alert': { run: testAlertCommand, help: TEST_ALERT_HELP },
};

/**
 * Runs the `churn-risk` CLI with `argv` (without node and the script); resolves with the exit code.
 * `stop` ends a long-running command (`sandbox`, `deliveries --follow`) as Ctrl+C would.
 */
export async function runCli(argv: string[], io: CliIo, stop?: AbortSignal): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(TOP_HELP);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    io.err(`churn-risk: unknown command "${name}".\n\n${TOP_HELP}`);
    return EXIT.usage;
  }
  try {
    return await command.run(args, io, stop);
  } catch (error) {
    if (error instanceof SandboxContactError) {
      io.err(`churn-risk ${name}: ${error.message}\n`);
      return EXIT.failed;
    }
    if (!(error instanceof UsageError)) throw error;
    io.err(`churn-risk ${name}: ${error.message}\nRun "churn-risk ${name} --help" for usage.\n`);
    return EXIT.usage;
  }
}
