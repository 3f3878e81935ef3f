import type { ChildProcess } from 'node:child_process';
import { existsSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  newestMtime,
  nextBinOf,
  nextStarted,
  runNextCommand,
  type NextRun,
} from '../../../test/support/next-process.js';
import { alertBody, signHeaders } from '../lib/alert.js';
import { REPO_ROOT } from '../lib/child.js';
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
import { processTree, treeCpuMicros } from './process-tree.js';

/** The benchmark's own Next app (App Router, one route per target). */
const APP_DIR = fileURLToPath(new URL('../../next-app/', import.meta.url));
/** The `next` package's directory (its modification time invalidates a build). */
const NEXT_DIR = join(nextBinOf(APP_DIR), '..', '..', '..');
const CONNECTIONS = 32;

const TARGETS = [
  { name: 'bare', path: '/webhooks/bare', label: 'bare route handler (await request.json())' },
  {
    name: 'bare-after',
    path: '/webhooks/bare-after',
    label: 'bare route handler + one no-op after() callback',
  },
  { name: 'ours', path: '/webhooks/ours', label: 'createRouteHandler(receiver)' },
] as const;
type TargetName = (typeof TARGETS)[number]['name'];

/** Every process this module started and has not seen exit: killed (with their trees) on exit. */
const live = new Set<ChildProcess>();

/** SIGKILLs `child`, its process group and every descendant (a `next start` worker included). */
function killTree(child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const pids = processTree(pid);
  try {
    process.kill(-pid, 'SIGKILL'); // the group: children are started detached, as group leaders
  } catch {
    // already gone
  }
  for (const each of pids) {
    try {
      process.kill(each, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

function killAll(): void {
  for (const child of live) killTree(child);
  live.clear();
}
// child.ts turns SIGINT/SIGTERM into process.exit, so this also runs on Ctrl-C.
process.once('exit', killAll);

/** `next <args>` in the app, as its own process group, tracked until it exits. */
function run(args: readonly string[]): NextRun {
  const started = runNextCommand(APP_DIR, args, { detached: true, keepLast: 65_536 });
  live.add(started.child);
  void started.exited.then(() => live.delete(started.child));
  return started;
}

async function stop(server: NextRun): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  killTree(server.child);
  await server.exited;
}

/**
 * Runs `next build` unless `.next/BUILD_ID` (written last by a production build) is newer than the
 * app's sources, the built packages/core/dist and packages/next/dist, and the installed `next`.
 * (`pnpm bench` rebuilds the packages first, so under it the app is always rebuilt.)
 */
async function buildIfStale(): Promise<'built' | 'reused'> {
  for (const name of ['core', 'next']) {
    if (!existsSync(join(REPO_ROOT, 'packages', name, 'dist', 'index.js')))
      throw new Error(`packages/${name}/dist is missing: run \`pnpm build\` first`);
  }
  const buildId = join(APP_DIR, '.next', 'BUILD_ID');
  const inputs = Math.max(
    newestMtime(join(APP_DIR, 'app')),
    newestMtime(join(APP_DIR, 'next.config.ts')),
    newestMtime(join(APP_DIR, 'tsconfig.json')),
    newestMtime(join(REPO_ROOT, 'packages', 'core', 'dist')),
    newestMtime(join(REPO_ROOT, 'packages', 'next', 'dist')),
    newestMtime(join(realpathSync(NEXT_DIR), 'package.json')),
  );
  if (existsSync(buildId) && statSync(buildId).mtimeMs > inputs) return 'reused';
  console.error('next: next build (bench/next-app)');
  const build = run(['build']);
  const { code, signal } = await build.exited;
  if (code !== 0)
    throw new Error(
      `next build failed (exit ${code ?? signal ?? '?'}):\n${build.output().slice(-4000)}`,
    );
  return 'built';
}

/** Starts `next start` on a free port of 127.0.0.1 and waits until it answers HTTP. */
async function startServer(): Promise<{ server: NextRun; port: number }> {
  const server = run(['start', '--port', '0', '--hostname', '127.0.0.1']);
  const port = Number(new URL(await nextStarted(server, 60_000)).port);
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await (await fetch(`http://127.0.0.1:${port}/webhooks/bare`)).arrayBuffer(); // 405: fine
      return { server, port };
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** A signed delivery must get 202; for ours, one signed with another secret 401. */
async function checkServer(name: TargetName, url: string): Promise<void> {
  const body = alertBody();
  const good = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signHeaders(body) },
    body,
  });
  const goodText = await good.text();
  if (good.status !== 202)
    throw new Error(`${name}: a signed delivery got ${good.status} ${goodText}`);
  if (name !== 'ours') return; // only ours verifies
  const forged = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signHeaders(body, 'not-the-secret') },
    body,
  });
  const forgedText = await forged.text();
  if (forged.status !== 401)
    throw new Error(
      `${name}: a delivery signed with a wrong secret got ${forged.status} ${forgedText}`,
    );
}

/** One measured round: the load's numbers and the server tree's CPU microseconds per answer. */
interface Round extends MeasuredRound {
  cpuMicros: number;
  /** How many processes the server's tree had at the end of the round (`next start` and workers). */
  processes: number;
}

/**
 * The Next route handlers under a real `next start`: the bare route and ours, each in its own
 * `next start` of the same production build, autocannon in this process, rounds interleaved.
 */
export async function runNext(settings: BenchSettings): Promise<BenchResult> {
  const rounds = settings.quick ? 1 : 3;
  const duration = settings.quick ? 2 : 5;
  // Not 2 s as in http: under `next start` both routes keep speeding up for ~10-15 s of load
  // (lazy loading and JIT of Next's server code, more of it on our route), and a 2 s warm-up left
  // round 1 at about twice the steady CPU per request.
  const warmUp = settings.quick ? 1 : 15;
  const servers = new Map<TargetName, { server: NextRun; port: number }>();
  const runs = new Map<TargetName, Round[]>(TARGETS.map((t) => [t.name, []]));
  let build: 'built' | 'reused';
  try {
    build = await buildIfStale();
    const started = await Promise.allSettled(TARGETS.map(() => startServer()));
    for (const [i, result] of started.entries()) {
      const target = TARGETS[i]!;
      if (result.status === 'rejected') throw result.reason;
      servers.set(target.name, result.value);
    }
    const serverOf = (name: TargetName): { server: NextRun; port: number } => {
      const found = servers.get(name);
      if (found === undefined) throw new Error(`no server ${name}`);
      return found;
    };
    for (const target of TARGETS)
      await checkServer(
        target.name,
        `http://127.0.0.1:${serverOf(target.name).port}${target.path}`,
      );
    for (const target of TARGETS) {
      console.error(`next: warm-up ${target.name}`);
      await signedLoad(serverOf(target.name).port, {
        connections: CONNECTIONS,
        duration: warmUp,
        path: target.path,
      });
    }
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < TARGETS.length; k++) {
        const target = TARGETS[(round + k) % TARGETS.length]!;
        const { server, port } = serverOf(target.name);
        console.error(`next: round ${round + 1}/${rounds} ${target.name}`);
        const pid = server.child.pid!;
        const cpuBefore = treeCpuMicros(pid);
        const load = await signedLoad(port, {
          connections: CONNECTIONS,
          duration,
          path: target.path,
        });
        const cpuMicros = treeCpuMicros(pid) - cpuBefore;
        runs.get(target.name)?.push({
          ...load,
          cpuMicros,
          cpuPerRequest: load.total > 0 ? cpuMicros / load.total : 0,
          processes: processTree(pid).length,
        });
      }
    }
    for (const target of TARGETS) {
      const { server } = serverOf(target.name);
      if (server.child.exitCode !== null || server.child.signalCode !== null)
        throw new Error(`next start (${target.name}) died:\n${server.output().slice(-4000)}`);
      if (/\berror\b/i.test(server.output()))
        console.error(`next: ${target.name} server logged:\n${server.output().slice(-4000)}`);
    }
  } finally {
    await Promise.all([...servers.values()].map(({ server }) => stop(server)));
    killAll(); // anything else still running (a build or a server that failed to start)
  }

  const summary = (name: TargetName): RoundsSummary => summarizeRounds(runs.get(name) ?? []);
  const base = summary('bare');
  const rows = TARGETS.map((target) => [target.label, ...loadCells(summary(target.name), base)]);
  const table = markdownTable(['server', ...LOAD_COLUMNS], rows);
  const notes = [
    `Next.js under \`next start\` (production build of bench/next-app, ${build === 'built' ? 'built' : 'reused'}`,
    `for this run), App Router route handlers on the Node.js runtime; ${CONNECTIONS} connections,`,
    `${rounds} interleaved round(s) of ${duration} s per route after a ${warmUp} s warm-up; each request`,
    'a fresh ~250-byte alert signed when sent. Each route has its own `next start` process (the same',
    "build), so server CPU per request is that process tree's user + system CPU time (/proc/<pid>/stat)",
    'during a round divided by the requests answered in it (median of the rounds). The receiver is a',
    'default one (async mode, dedupe on) with one no-op handler, which runs in `after()`.',
  ].join(' ');
  return {
    name: 'next',
    title: 'Next.js route handler under `next start`',
    markdown: `${table}\n\n${notes}`,
    data: { build, ...Object.fromEntries(runs) },
  };
}
