/**
 * CPU profile of one benchmark server under signed load: starts `script` with `--cpu-prof`,
 * drives it with signed alerts for `seconds`, then lets it exit (it exits on disconnect), which
 * writes the profile to bench/results/prof/ (one per thread; the largest is the main thread).
 */
import { fileURLToPath } from 'node:url';
import { startChild } from './child.js';
import { signedLoad } from './signed-load.js';

/** Profiles `name` (started as `script args`); resolves with the folder of the profiles. */
export async function profileChild(
  script: string,
  args: string[],
  name: string,
  seconds: number,
): Promise<string> {
  const dir = fileURLToPath(new URL('../../results/prof/', import.meta.url));
  const child = await startChild<{ port: number }>(script, args, [
    '--cpu-prof',
    `--cpu-prof-dir=${dir}`,
  ]);
  const result = await signedLoad(child.ready.port, { connections: 32, duration: seconds });
  console.log(`${name}: ${Math.round(result.requestsPerSecond)} req/s`, result.statuses);
  const exited = new Promise((resolve) => child.process.once('exit', resolve));
  child.process.disconnect();
  await exited;
  return dir;
}
