/**
 * Loads one export of a workspace package that may not exist yet (the adapters, the receiver, the
 * client and the sandbox are written alongside these benchmarks). The specifier is a variable on
 * purpose: the benchmarks type-check and run whatever is missing, and skip what needs it.
 */
export async function loadExport<T>(
  specifier: string,
  name: string,
): Promise<{ value: T } | { missing: string }> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(specifier)) as Record<string, unknown>;
  } catch (error) {
    return { missing: `${specifier} did not load (${(error as Error).message.split('\n')[0] ?? ''})` };
  }
  const value = mod[name];
  if (value === undefined) return { missing: `${specifier} has no export ${name} yet` };
  return { value: value as T };
}

/** Loads several exports; returns the first reason one is missing. */
export async function loadExports<T extends Record<string, unknown>>(
  wanted: { [K in keyof T]: [specifier: string, name: string] },
): Promise<{ value: T } | { missing: string }> {
  const out: Record<string, unknown> = {};
  for (const [key, [specifier, name]] of Object.entries(wanted) as [string, [string, string]][]) {
    const loaded = await loadExport(specifier, name);
    if ('missing' in loaded) return loaded;
    out[key] = loaded.value;
  }
  return { value: out as T };
}
