/**
 * Runs `measure` once for every name in every round, each round starting with the next name, so
 * that drift (other load on the machine, a warming JIT, a growing data set) spreads over all of
 * them instead of hitting the ones measured last. Resolves with each name's results, in round order.
 */
export async function interleaveRounds<T>(
  names: readonly string[],
  rounds: number,
  measure: (name: string, round: number) => Promise<T>,
): Promise<Map<string, T[]>> {
  const results = new Map<string, T[]>(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length] as string;
      results.get(name)?.push(await measure(name, round));
    }
  }
  return results;
}
