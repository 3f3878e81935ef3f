import { alertBody, signHeaders, WEBHOOK_PATH } from '../lib/alert.js';
import { startChild, type BenchChild } from '../lib/child.js';
import {
  LOAD_COLUMNS,
  loadCells,
  summarizeRounds,
  type MeasuredRound,
  type RoundsSummary,
} from '../lib/load-summary.js';
import { signedLoad } from '../lib/signed-load.js';
import { markdownTable } from '../lib/table.js';
import type { BenchResult, BenchSettings } from '../lib/types.js';

/** Each adapter and its bare framework route (and a hand-written check, for Express and Fastify). */
const COMPARISONS: readonly { framework: string; bare: string; others: readonly string[] }[] = [
  { framework: 'Express 5', bare: 'express-bare', others: ['express-hand', 'express-ours'] },
  { framework: 'Fastify 5', bare: 'fastify-bare', others: ['fastify-hand', 'fastify-ours'] },
  { framework: 'Next route handler', bare: 'next-bare', others: ['next-ours'] },
];

const LABELS: Record<string, string> = {
  'express-bare': 'bare route, express.json(), no verification',
  'express-hand': 'express.raw() + hand-written HMAC check + JSON.parse',
  'express-ours': 'createMiddleware(receiver)',
  'fastify-bare': 'bare route, built-in JSON parser, no verification',
  'fastify-hand': 'raw-buffer parser + hand-written HMAC check + JSON.parse',
  'fastify-ours': 'churnRiskPlugin',
  'next-bare': 'bare route handler (await request.json())',
  'next-ours': 'createRouteHandler(receiver)',
};

const CONNECTIONS = 32;

/** The server child's CPU time so far (user + system), in microseconds. */
async function cpuOf(child: BenchChild<{ port: number }>): Promise<number> {
  const reply = child.next<{ cpu: NodeJS.CpuUsage }>();
  child.send('cpu');
  const { cpu } = await reply;
  return cpu.user + cpu.system;
}

/** One signed delivery must get 202, and for our adapters a forged one 401. */
async function checkServer(name: string, port: number): Promise<void> {
  const url = `http://127.0.0.1:${port}${WEBHOOK_PATH}`;
  const body = alertBody();
  const good = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signHeaders(body) },
    body,
  });
  if (good.status !== 202) throw new Error(`${name}: a signed delivery got ${good.status}`);
  if (name.endsWith('bare')) return;
  const forged = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signHeaders(body, 'not-the-secret') },
    body,
  });
  if (forged.status !== 401) throw new Error(`${name}: a forged delivery got ${forged.status}`);
}

/**
 * HTTP throughput: each server in its own child process, autocannon in this one, targets
 * interleaved round by round (every round starts with the next target).
 */
export async function runHttp(settings: BenchSettings): Promise<BenchResult> {
  const { only } = settings;
  const comparisons = COMPARISONS.filter(
    (c) => only === undefined || [c.bare, ...c.others].some((name) => name.includes(only)),
  );
  if (comparisons.length === 0) throw new Error(`no HTTP server name contains "${only ?? ''}"`);
  const names = comparisons.flatMap((c) => [c.bare, ...c.others]);
  const rounds = settings.quick ? 1 : 3;
  const duration = settings.quick ? 2 : 5;
  const children = new Map<string, BenchChild<{ port: number }>>();
  const runs = new Map<string, MeasuredRound[]>(names.map((n) => [n, []]));
  try {
    for (const name of names) {
      const child = await startChild<{ port: number }>('http/server.ts', [name]);
      children.set(name, child);
      await checkServer(name, child.ready.port);
    }
    const child = (name: string): BenchChild<{ port: number }> => {
      const found = children.get(name);
      if (found === undefined) throw new Error(`no server ${name}`);
      return found;
    };
    const port = (name: string): number => child(name).ready.port;
    for (const name of names) {
      console.error(`http: warm-up ${name}`);
      await signedLoad(port(name), { connections: CONNECTIONS, duration: settings.quick ? 1 : 2 });
    }
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(round + k) % names.length] as string;
        console.error(`http: round ${round + 1}/${rounds} ${name}`);
        const cpuBefore = await cpuOf(child(name));
        const load = await signedLoad(port(name), { connections: CONNECTIONS, duration });
        const cpu = (await cpuOf(child(name))) - cpuBefore;
        runs.get(name)?.push({ ...load, cpuPerRequest: load.total > 0 ? cpu / load.total : 0 });
      }
    }
  } finally {
    await Promise.all([...children.values()].map((c) => c.kill()));
  }

  const summary = (name: string): RoundsSummary => summarizeRounds(runs.get(name) ?? []);
  const rows: string[][] = [];
  for (const { framework, bare, others } of comparisons) {
    const base = summary(bare);
    for (const name of [bare, ...others]) {
      rows.push([framework, LABELS[name] ?? name, ...loadCells(summary(name), base)]);
    }
  }
  const table = markdownTable(['framework', 'server', ...LOAD_COLUMNS], rows);
  const notes = [
    `${CONNECTIONS} connections, ${rounds} round(s) of ${duration} s per server after a warm-up;`,
    'each request a fresh ~250-byte alert signed when sent. Each server runs in its own child',
    'process; the receivers are default ones (async mode, dedupe on) with a no-op handler.',
    "Server CPU per request: the server process's user + system CPU time during a round divided",
    'by the requests answered in it (median of the rounds); "bare / this" above 0.9 means the',
    'adapter costs at most 1/0.9 of the bare route per request, whatever the load generator can drive.',
    'Next: the route handlers are called from a plain node:http server that converts each request',
    'to a Web `Request` (the same conversion for the bare handler and ours), not from `next start`.',
  ].join(' ');
  return {
    name: 'http',
    title: 'HTTP throughput (autocannon)',
    markdown: `${table}\n\n${notes}`,
    data: Object.fromEntries(runs),
  };
}
