import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './cli-io.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Parses a command's flags strictly (unknown flags and stray arguments are a `UsageError`). */
export function parseFlags<O extends Options>(
  args: string[],
  options: O,
): ReturnType<
  typeof parseArgs<{ options: O; strict: true; allowPositionals: false; args: string[] }>
>['values'] {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** A port flag: a whole number 0..65535. */
export function parsePort(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535)
    throw new UsageError(`--port must be a whole number 0..65535, got "${value}".`);
  return port;
}

/**
 * Parses a command's flags strictly and returns its positional arguments too (at most `max`; more,
 * or an unknown flag, is a `UsageError`).
 */
export function parseCommand<O extends Options>(
  args: string[],
  options: O,
  max: number,
): {
  values: ReturnType<
    typeof parseArgs<{ options: O; strict: true; allowPositionals: true; args: string[] }>
  >['values'];
  positionals: string[];
} {
  let parsed;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const extra = parsed.positionals[max];
  if (extra !== undefined) throw new UsageError(`Unexpected argument "${extra}".`);
  return { values: parsed.values, positionals: parsed.positionals };
}
