/** The `churn-risk` command (see `churn-risk --help`). */
import { runCli } from './cli/run-cli.js';

const io = {
  out: (text: string): void => {
    process.stdout.write(text);
  },
  err: (text: string): void => {
    process.stderr.write(text);
  },
};

try {
  process.exitCode = await runCli(process.argv.slice(2), io);
} catch (error) {
  process.stderr.write(`churn-risk: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
