/** A required environment variable; exits with a clear message when it is missing. */
export function requireEnv(name: string, what: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    console.error(`Set ${name} to ${what}.`);
    process.exit(1);
  }
  return value;
}

/** A whole-number environment variable, or `fallback` when it is not set. */
export function numberEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    console.error(`${name} must be a whole number, got "${raw}".`);
    process.exit(1);
  }
  return value;
}
