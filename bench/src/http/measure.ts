/**
 * Measures HTTP servers of servers.ts side by side: each in its own child process, autocannon in
 * this one, rounds interleaved (every round starts with the next server), the server's CPU time
 * read through IPC around each round. Shared by the benchmarks that load HTTP servers.
 */
import { alertBody, signGithubHeaders, signHeaders, WEBHOOK_PATH } from '../lib/alert.js';
import { startChild, type BenchChild } from '../lib/child.js';
import type { MeasuredRound } from '../lib/load-summary.js';
import { signedLoad } from '../lib/signed-load.js';

/** Servers that take GitHub's signature (`x-hub-signature-256` over the body) instead of ours. */
const GITHUB_SIGNED: ReadonlySet<string> = new Set(['node-octokit']);

/** The signature headers server `name` verifies. */
export function signerFor(name: string): (body: string) => Record<string, string> {
  return GITHUB_SIGNED.has(name) ? (body) => signGithubHeaders(body) : (body) => signHeaders(body);
}

/** The status a server answers a genuine delivery with (octokit's middleware answers 200). */
const acceptedStatus = (name: string): number => (name === 'node-octokit' ? 200 : 202);
/** The status for a forged signature, or undefined for the servers that verify nothing. */
const forgedStatus = (name: string): number | undefined =>
  name.endsWith('bare') ? undefined : name === 'node-octokit' ? 400 : 401;

/** The server child's CPU time so far (user + system), in microseconds. */
async function cpuOf(child: BenchChild<{ port: number }>): Promise<number> {
  const reply = child.next<{ cpu: NodeJS.CpuUsage }>();
  child.send('cpu');
  const { cpu } = await reply;
  return cpu.user + cpu.system;
}

/** One genuine delivery must get the accepted status and, for the verifying servers, a forged one its refusal. */
async function checkServer(name: string, port: number): Promise<void> {
  const url = `http://127.0.0.1:${port}${WEBHOOK_PATH}`;
  const body = alertBody();
  const sign = signerFor(name);
  const good = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...sign(body) },
    body,
  });
  if (good.status !== acceptedStatus(name)) {
    throw new Error(`${name}: a signed delivery got ${good.status}`);
  }
  const refused = forgedStatus(name);
  if (refused === undefined) return;
  const forgedHeaders = { ...sign(body) };
  for (const [header, value] of Object.entries(forgedHeaders)) {
    // Flip the last hex digit of the signature: one changed byte must be refused.
    if (value.startsWith('sha256=')) {
      forgedHeaders[header] = `${value.slice(0, -1)}${value.endsWith('0') ? '1' : '0'}`;
    }
  }
  const forged = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...forgedHeaders },
    body,
  });
  if (forged.status !== refused) throw new Error(`${name}: a forged delivery got ${forged.status}`);
}

export interface MeasureOptions {
  connections: number;
  /** Measured rounds; in each, every server gets `duration` seconds of load. */
  rounds: number;
  duration: number;
  /** Seconds of load per server before the first round. */
  warmup: number;
  /** Called before each measured load, for progress output. */
  progress?: (message: string) => void;
}

/** Each server's measured rounds, in `names` order. */
export async function measureServers(
  names: readonly string[],
  options: MeasureOptions,
): Promise<Map<string, MeasuredRound[]>> {
  const { connections, rounds, duration, warmup } = options;
  const progress = options.progress ?? ((message: string) => console.error(message));
  const children = new Map<string, BenchChild<{ port: number }>>();
  const runs = new Map<string, MeasuredRound[]>(names.map((n) => [n, []]));
  const child = (name: string): BenchChild<{ port: number }> => {
    const found = children.get(name);
    if (found === undefined) throw new Error(`no server ${name}`);
    return found;
  };
  const load = (name: string, seconds: number) =>
    signedLoad(child(name).ready.port, { connections, duration: seconds, sign: signerFor(name) });
  try {
    for (const name of names) {
      const started = await startChild<{ port: number }>('http/server.ts', [name]);
      children.set(name, started);
      await checkServer(name, started.ready.port);
    }
    for (const name of names) {
      progress(`http: warm-up ${name}`);
      await load(name, warmup);
    }
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(round + k) % names.length] as string;
        progress(`http: round ${round + 1}/${rounds} ${name}`);
        const cpuBefore = await cpuOf(child(name));
        const result = await load(name, duration);
        const cpu = (await cpuOf(child(name))) - cpuBefore;
        runs
          .get(name)
          ?.push({ ...result, cpuPerRequest: result.total > 0 ? cpu / result.total : 0 });
      }
    }
  } finally {
    await Promise.all([...children.values()].map((c) => c.kill()));
  }
  return runs;
}
