/** Readable step-by-step output for the demo; a failed step sets the exit code. */
export interface Report {
  step(title: string): void;
  ok(message: string): void;
  info(message: string): void;
  fail(message: string): void;
  readonly failures: number;
}

/** Creates a report that writes to stdout (or to `write`, for tests). */
export function createReport(
  write: (line: string) => void = (line) => {
    console.log(line);
  },
): Report {
  let steps = 0;
  let failures = 0;
  return {
    step(title) {
      steps++;
      write(`\n${steps}. ${title}`);
    },
    ok(message) {
      write(`   ✓ ${message}`);
    },
    info(message) {
      write(`     ${message}`);
    },
    fail(message) {
      failures++;
      write(`   ✗ ${message}`);
    },
    get failures() {
      return failures;
    },
  };
}
