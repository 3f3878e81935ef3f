import type { ChaosOptions } from '../chaos/chaos.js';
import { UsageError } from './cli-io.js';

/** The chaos flags of `churn-risk sandbox`. */
export const CHAOS_FLAGS = {
  'duplicate-rate': { type: 'string' },
  'max-extra-delay-ms': { type: 'string' },
  'bad-signature-rate': { type: 'string' },
  'chaos-seed': { type: 'string' },
} as const;

/** Help lines of `CHAOS_FLAGS`. */
export const CHAOS_HELP = `  --duplicate-rate <0..1>      Chaos: send this share of acknowledged tries once more, byte-identical
  --max-extra-delay-ms <ms>    Chaos: wait a random 0..ms before each try (alerts arrive out of order)
  --bad-signature-rate <0..1>  Chaos: sign this share of tries with a wrong secret (then retried)
  --chaos-seed <n>             Chaos: seed the random draws, to repeat a run exactly`;

const DECIMAL = /^(0(\.\d+)?|1(\.0+)?|\.\d+)$/;

function rate(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!DECIMAL.test(value))
    throw new UsageError(`--${flag} must be a number from 0 to 1, got "${value}".`);
  return Number(value);
}

function whole(flag: string, value: string | undefined, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) > max)
    throw new UsageError(`--${flag} must be a whole number from 0 to ${max}, got "${value}".`);
  return Number(value);
}

/** The chaos options the flags ask for (`{}` without any). */
export function chaosFromFlags(flags: {
  'duplicate-rate'?: string | undefined;
  'max-extra-delay-ms'?: string | undefined;
  'bad-signature-rate'?: string | undefined;
  'chaos-seed'?: string | undefined;
}): ChaosOptions {
  const options: ChaosOptions = {};
  const duplicateRate = rate('duplicate-rate', flags['duplicate-rate']);
  const badSignatureRate = rate('bad-signature-rate', flags['bad-signature-rate']);
  const maxExtraDelayMs = whole('max-extra-delay-ms', flags['max-extra-delay-ms'], 60_000);
  const seed = whole('chaos-seed', flags['chaos-seed'], 2 ** 32 - 1);
  if (duplicateRate !== undefined) options.duplicateRate = duplicateRate;
  if (badSignatureRate !== undefined) options.badSignatureRate = badSignatureRate;
  if (maxExtraDelayMs !== undefined) options.maxExtraDelayMs = maxExtraDelayMs;
  if (seed !== undefined) options.seed = seed;
  return options;
}
