import { ChurnRiskError } from '@churn-risk/core';

/** Where the CLI writes; tests and the entry point supply their own. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

/** Exit codes: 0 success, 1 the operation failed, 2 wrong usage. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A command-line mistake: printed with a hint to `--help`, exit code 2. */
export class UsageError extends ChurnRiskError {
  override readonly name = 'UsageError';
  override readonly code = 'WRONG_USAGE' as const;
}
