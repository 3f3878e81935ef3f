import { createSeededRandom } from './seeded-random.js';

/**
 * Chaos in the webhook deliveries, to prove that a receiver is idempotent and
 * copes with alerts arriving out of order. Every rate is a probability from 0 to 1; all default 0.
 */
export interface ChaosOptions {
  /** An acknowledged (2xx) try is sent once more, byte-identical (same body, timestamp, signature). */
  duplicateRate?: number;
  /** Each try (and duplicate) waits a random 0..maxExtraDelayMs real milliseconds before sending. */
  maxExtraDelayMs?: number;
  /** A try is signed with a wrong secret; the receiver's 401 is a failed try, retried as usual. */
  badSignatureRate?: number;
  /** Seeds the random draws, so a run can be repeated exactly. Ignored when `random` is given. */
  seed?: number;
  /** The random source, numbers in [0, 1). Default `Math.random` (or a generator seeded with `seed`). */
  random?: () => number;
}

/** The chaos settings in effect (what the dashboard shows). */
export interface ChaosSettings {
  duplicateRate: number;
  maxExtraDelayMs: number;
  badSignatureRate: number;
}

/** The decisions chaos takes for each try. Draws a random number only for a setting above 0. */
export interface Chaos {
  readonly settings: ChaosSettings;
  /** How long to wait before sending a try, ms. */
  extraDelayMs(): number;
  /** Whether to sign this try with a wrong secret. */
  badSignature(): boolean;
  /** Whether to send an acknowledged try again. */
  duplicate(): boolean;
}

const RATES = ['duplicateRate', 'badSignatureRate'] as const;

/** Why chaos options are unusable, or `undefined` when they are fine. */
export function chaosProblem(options: ChaosOptions): string | undefined {
  for (const name of RATES) {
    const value = options[name];
    if (value !== undefined && !(typeof value === 'number' && value >= 0 && value <= 1))
      return `chaos.${name} must be a number from 0 to 1.`;
  }
  const delay = options.maxExtraDelayMs;
  if (delay !== undefined && !(Number.isInteger(delay) && delay >= 0 && delay <= 60_000))
    return 'chaos.maxExtraDelayMs must be a whole number of milliseconds from 0 to 60000.';
  if (options.seed !== undefined && !Number.isInteger(options.seed))
    return 'chaos.seed must be a whole number.';
  return undefined;
}

/** Creates the chaos decisions; `createChaos()` (no options) never interferes. */
export function createChaos(options: ChaosOptions = {}): Chaos {
  const random =
    options.random ?? (options.seed === undefined ? Math.random : createSeededRandom(options.seed));
  const settings: ChaosSettings = {
    duplicateRate: options.duplicateRate ?? 0,
    maxExtraDelayMs: options.maxExtraDelayMs ?? 0,
    badSignatureRate: options.badSignatureRate ?? 0,
  };
  const chance = (rate: number): boolean => rate > 0 && random() < rate;
  return {
    settings,
    extraDelayMs: () =>
      settings.maxExtraDelayMs > 0 ? Math.floor(random() * (settings.maxExtraDelayMs + 1)) : 0,
    badSignature: () => chance(settings.badSignatureRate),
    duplicate: () => chance(settings.duplicateRate),
  };
}
