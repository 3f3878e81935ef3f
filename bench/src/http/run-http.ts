import {
  loadCells,
  loadColumns,
  summarizeRounds,
  type RoundsSummary,
} from '../lib/load-summary.js';
import { beforeAfterMarkdown, type BeforeAfter } from '../lib/before-after.js';
import { beforeHas, beforeLabel, type PackageName } from '../lib/packages.js';
import { formatRatio, markdownTable } from '../lib/table.js';
import type { BenchResult, BenchSettings } from '../lib/types.js';
import { measureServers } from './measure.js';

/**
 * Each adapter against its reference: the hand-written route of its framework that does the job's
 * minimum (raw body, HMAC-SHA256, constant-time compare, tolerance, `JSON.parse`, 202), or for
 * `receiver.node` `@octokit/webhooks`' node middleware. The route that verifies nothing is shown
 * for information.
 */
const COMPARISONS: readonly {
  framework: string;
  reference: string;
  ours: string;
  goal: number;
  info: readonly string[];
  /** What `<ours>-before` (`--before=<git-ref>`) loads from the before build. */
  packages: readonly PackageName[];
}[] = [
  {
    framework: 'Express 5',
    reference: 'express-hand',
    ours: 'express-ours',
    goal: 0.9,
    info: ['express-bare'],
    packages: ['@churn-risk/core', '@churn-risk/express'],
  },
  {
    framework: 'Fastify 5',
    reference: 'fastify-hand',
    ours: 'fastify-ours',
    goal: 0.9,
    info: ['fastify-bare'],
    packages: ['@churn-risk/core', '@churn-risk/fastify'],
  },
  {
    framework: 'node:http',
    reference: 'node-octokit',
    ours: 'node-ours',
    goal: 1,
    info: ['node-bare'],
    packages: ['@churn-risk/core'],
  },
  {
    framework: 'Next route handler',
    reference: 'next-hand',
    ours: 'next-ours',
    goal: 0.9,
    info: ['next-bare'],
    packages: ['@churn-risk/core', '@churn-risk/next'],
  },
  {
    framework: 'Hono 4 on Node',
    reference: 'hono-hand',
    ours: 'hono-ours',
    goal: 0.9,
    info: ['hono-bare'],
    packages: ['@churn-risk/core', '@churn-risk/hono'],
  },
  {
    framework: 'Koa 3',
    reference: 'koa-hand',
    ours: 'koa-ours',
    goal: 0.9,
    info: ['koa-bare'],
    packages: ['@churn-risk/core', '@churn-risk/koa'],
  },
];

const LABELS: Record<string, string> = {
  'express-bare': 'bare route, express.json(), no verification (information)',
  'express-hand': 'reference: express.raw() + hand-written check',
  'express-ours': 'createMiddleware(receiver)',
  'fastify-bare': 'bare route, built-in JSON parser, no verification (information)',
  'fastify-hand': 'reference: raw-buffer parser + hand-written check',
  'fastify-ours': 'churnRiskPlugin',
  'node-bare': 'bare listener, body + JSON.parse, no verification (information)',
  'node-octokit': 'reference: @octokit/webhooks createNodeMiddleware',
  'node-ours': 'receiver.node',
  'next-bare': 'bare route handler (await request.json()), no verification (information)',
  'next-hand': 'reference: route handler, arrayBuffer() + hand-written check',
  'next-ours': 'createRouteHandler(receiver)',
  'hono-bare': 'bare route (await c.req.json()), no verification (information)',
  'hono-hand': 'reference: c.req.arrayBuffer() + hand-written check',
  'hono-ours': 'createHandler(receiver)',
  'koa-bare': 'bare route, body + JSON.parse, no verification (information)',
  'koa-hand': 'reference: raw body from ctx.req + hand-written check',
  'koa-ours': 'createMiddleware(receiver)',
};

const CONNECTIONS = 32;

/**
 * HTTP throughput: each server in its own child process, autocannon in this one, servers
 * interleaved round by round (every round starts with the next server). With `--before`, each of
 * our servers has a twin on the before build's packages (`<ours>-before`) in the same rounds.
 */
export async function runHttp(settings: BenchSettings): Promise<BenchResult> {
  const { only, before } = settings;
  const comparisons = COMPARISONS.filter(
    (c) =>
      only === undefined || [c.reference, c.ours, ...c.info].some((name) => name.includes(only)),
  ).map((c) => ({
    ...c,
    // The twin, when the before build has its packages (some may not build at that commit).
    twin: beforeHas(before, ...c.packages) ? [`${c.ours}-before`] : [],
  }));
  if (comparisons.length === 0) throw new Error(`no HTTP server name contains "${only ?? ''}"`);
  const names = comparisons.flatMap((c) => [c.reference, c.ours, ...c.twin, ...c.info]);
  const rounds = settings.quick ? 1 : 3;
  const duration = settings.quick ? 2 : 5;
  const runs = await measureServers(names, {
    connections: CONNECTIONS,
    rounds,
    duration,
    warmup: settings.quick ? 1 : 2,
  });

  const summary = (name: string): RoundsSummary => summarizeRounds(runs.get(name) ?? []);
  const rows: string[][] = [];
  const verdicts: string[] = [];
  const beforeAfter: BeforeAfter[] = [];
  const labelOf = (name: string): string =>
    name.endsWith('-before') && before !== undefined
      ? `before ${beforeLabel(before)}: ${LABELS[name.slice(0, -'-before'.length)] ?? name}`
      : (LABELS[name] ?? name);
  for (const { framework, reference, ours, goal, info, twin } of comparisons) {
    const base = summary(reference);
    for (const name of [reference, ours, ...twin, ...info]) {
      rows.push([framework, labelOf(name), ...loadCells(summary(name), base)]);
    }
    for (const name of twin) {
      beforeAfter.push({
        framework,
        reference: runs.get(reference) ?? [],
        after: runs.get(ours) ?? [],
        before: runs.get(name) ?? [],
      });
    }
    const rps = summary(ours).rps / base.rps;
    const cpu = base.cpu / summary(ours).cpu;
    const met = rps >= goal && cpu >= goal;
    verdicts.push(
      `- ${framework}: ${LABELS[ours] ?? ours} at ${formatRatio(rps)} of the reference in req/s and ${formatRatio(cpu)} in CPU per request (goal >= ${formatRatio(goal)} in both: ${met ? 'met' : 'NOT met'})`,
    );
  }
  const table = markdownTable(['framework', 'server', ...loadColumns('reference')], rows);
  const skipped = comparisons.filter((c) => before !== undefined && c.twin.length === 0);
  const beforeSection =
    before === undefined
      ? ''
      : `\n\n${beforeAfterMarkdown(
          beforeAfter,
          beforeLabel(before),
          skipped.map((c) => c.framework),
        )}`;
  const notes = [
    `${CONNECTIONS} connections, ${rounds} round(s) of ${duration} s per server after a warm-up;`,
    'each request a fresh ~250-byte alert signed when sent. Each server runs in its own child',
    'process; the receivers are default ones (async mode, dedupe on) with a no-op handler.',
    "Server CPU per request: the server process's user + system CPU time during a round divided",
    'by the requests answered in it (median of the rounds); "reference / this" above 0.9 means the',
    'adapter costs at most 1/0.9 of the reference per request, whatever the load generator can drive.',
    "The references: in each framework a hand-written route doing the job's minimum (raw body,",
    'HMAC-SHA256 over `timestamp.body`, `timingSafeEqual`, the 300 s tolerance, `JSON.parse`, 202);',
    "for `receiver.node`, `@octokit/webhooks`' `createNodeMiddleware` on node:http (requests signed",
    'the GitHub way, `x-hub-signature-256` over the body; it runs its no-op handler before answering 200).',
    'Next: the route handlers are called from a plain node:http server that converts each request',
    'to a Web `Request` (the same conversion for the bare handler and ours), not from `next start`.',
    'Hono runs on Node through `@hono/node-server`; Koa with `@koa/router`.',
  ].join(' ');
  return {
    name: 'http',
    title: 'HTTP throughput (autocannon)',
    markdown: `${table}\n\n${verdicts.join('\n')}\n\n${notes}${beforeSection}`,
    data: Object.fromEntries(runs),
  };
}
