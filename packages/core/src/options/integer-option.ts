/** Checks a whole-number option: a `TypeError` naming it when it is not an integer >= `min`. */
export function integerOption(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) {
    throw new TypeError(`${name} must be an integer of at least ${min}.`);
  }
  return value;
}
