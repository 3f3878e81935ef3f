/**
 * Postgres mode's proof under faults: a real PostgreSQL 15 cluster, web processes that only accept
 * (`consume: false`) and worker processes that run the handler, all child processes on this
 * Node, on 127.0.0.1. Alerts are sent over HTTP by a client that resends whatever was
 * refused (503, or a connection error) until it is answered 202. Partway, one worker is SIGKILLed
 * mid-handler and started again; later PostgreSQL itself is stopped with `pg_ctl stop -m
 * immediate` and started again on the same port and data.
 */
import { startPostgres, type PostgresServer } from '@churn-risk/postgres/testing';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { SECRET, deliveryOf, freshAlert, tempLog } from '../redis/fixtures.js';
import { spawnTs, type NodeProcess } from '../support/node-process.js';
import { keepAliveAgent, runPool, send } from './http-pool.js';
import { collectRuns, killMidHandler, waitUntilAllDone } from './redis-cluster.js';

const WEB_SCRIPT = fileURLToPath(new URL('../support/postgres/web-process.ts', import.meta.url));
const WORKER_SCRIPT = fileURLToPath(
  new URL('../support/postgres/worker-process.ts', import.meta.url),
);

export interface FaultOptions {
  alerts: number;
  webs: number;
  workers: number;
  /** Client connections sending at once. */
  senders: number;
  /** SIGKILL a worker (mid-handler of a `hold_` alert) once this many alerts were answered 202. */
  killAfter: number;
  /** Stop PostgreSQL (`pg_ctl stop -m immediate`) once this many alerts were answered 202. */
  crashAfter: number;
  /** How long PostgreSQL stays down before it is started again. */
  downMs: number;
  /** Stop resending after this long (the alerts not answered 202 by then make the test fail). */
  giveUpMs: number;
}

/** What the scenario observed. */
export interface FaultReport {
  /** Alert ids answered 202 (the first 202 of each; several are never counted twice). */
  accepted: string[];
  /** Of them, answered `202 {"duplicate":true}` first (a commit that landed after a 503). */
  acceptedAsDuplicate: number;
  /** 503 answers, each resent. */
  refused: number;
  /** Requests that failed without an answer (connection refused or reset), each resent. */
  connectionErrors: number;
  /** Answers that were neither 202 nor 503 (`status body`). */
  unexpected: string[];
  killedPid: number;
  /** From the `pg_ctl stop -m immediate` to the restarted server accepting connections. */
  outageMs: number;
  /** 503s and connection errors while PostgreSQL was down or just after. */
  refusedDuringOutage: number;
  /** Each alert id with the [kind, pid] lines of its handler runs, in log order. */
  runs: Map<string, [string, string][]>;
  /** From the first send to the last alert handled. */
  seconds: number;
  workerExitCodes: (number | null)[];
  webExitCodes: (number | null)[];
}

const WORKER_ENV = {
  LOCK_MS: '10000', // above the outage: a verdict is retried until the lease would run out
  RECLAIM_MS: '1000',
  CONCURRENCY: '16',
  WORK_MS: '5',
  HOLD_MS: '3000',
};
/** How many alerts (user ids `hold_…`) just before the kill take HOLD_MS instead of WORK_MS. */
const HOLDS = 8;

/** Runs the scenario and tears everything down, also on failure. */
export async function runPostgresFaults(options: FaultOptions): Promise<FaultReport> {
  const node = process.execPath;
  const log = tempLog('pg-faults');
  const processes: NodeProcess[] = [];
  let postgres: PostgresServer | undefined;
  const agent = keepAliveAgent(options.senders);
  try {
    postgres = await startPostgres();
    const base = { DATABASE_URL: postgres.url, SECRET };
    const logOf = (n: number): string => join(log.dir, `worker-${n}.log`);
    const worker = (n: number): NodeProcess => {
      const child = spawnTs(
        WORKER_SCRIPT,
        { ...base, ...WORKER_ENV, LOG_FILE: logOf(n) },
        undefined,
        node,
      );
      processes.push(child);
      return child;
    };
    // All start at once: the schema's creation on first use is safe from several processes.
    const webs: NodeProcess[] = [];
    for (let n = 0; n < options.webs; n++) {
      const web = spawnTs(WEB_SCRIPT, base, undefined, node);
      processes.push(web);
      webs.push(web);
    }
    await Promise.all(webs.map((web) => web.waitForLines(/^listening on /)));
    const urls = webs.map(
      (web) => `${(web.lines[0] ?? '').slice('listening on '.length)}/webhooks`,
    );
    const workers = Array.from({ length: options.workers }, (_, n) => worker(n));
    await Promise.all(workers.map((w) => w.waitForLines(/^worker ready/)));

    const plan = Array.from({ length: options.alerts }, (_, i) => ({
      ...freshAlert(i >= options.killAfter - HOLDS && i < options.killAfter ? 'hold' : 'pgload'),
      web: i % options.webs,
    }));
    const accepted: string[] = [];
    let acceptedAsDuplicate = 0;
    let refused = 0;
    let connectionErrors = 0;
    let refusedDuringOutage = 0;
    const unexpected: string[] = [];
    let killedPid = -1;
    let restart: Promise<void> | undefined;
    let outage: Promise<number> | undefined;
    let outageSince: number | undefined;
    let outageOver: number | undefined;
    const server = postgres;
    const started = Date.now();
    const progress = setInterval(() => {
      const gone = processes.filter(
        (p) => p.child.exitCode !== null || p.child.signalCode !== null,
      );
      console.log(
        `[postgres-faults] ${((Date.now() - started) / 1000).toFixed(0)} s: ${accepted.length} ` +
          `answered 202, ${refused} refused, ${connectionErrors} connection errors, ` +
          `${gone.length} processes ended`,
      );
    }, 10_000);
    let next = 0;
    await runPool(
      options.senders,
      () => plan[next++],
      async (item) => {
        for (let attempt = 0; Date.now() - started < options.giveUpMs; attempt++) {
          const url = urls[(item.web + attempt) % options.webs] ?? '';
          let status = 0;
          let body = '';
          try {
            ({ status, body } = await send(agent, url, deliveryOf(item.alert)));
          } catch {
            connectionErrors += 1;
          }
          if (status === 202) {
            accepted.push(item.id);
            if (body.includes('"duplicate":true')) acceptedAsDuplicate += 1;
            break;
          }
          if (status === 503) refused += 1;
          else if (status !== 0) unexpected.push(`${status} ${body}`);
          if (outageSince !== undefined && (outageOver ?? Infinity) + 5_000 > Date.now()) {
            refusedDuringOutage += 1;
          }
          await delay(Math.min(50 * 2 ** attempt, 500)); // as a sender honouring Retry-After would
        }
        const answered = accepted.length;
        if (answered === options.killAfter) {
          const logs = workers.map((_, n) => logOf(n));
          restart = killMidHandler(workers, logs).then((pid) => {
            killedPid = pid;
            return worker(options.workers).waitForLines(/^worker ready/);
          });
        }
        if (answered === options.crashAfter) {
          outage = (async () => {
            outageSince = Date.now();
            await server.crash(); // pg_ctl stop -m immediate
            await delay(options.downMs);
            await server.start(); // same port, same data: crash recovery, then it accepts
            outageOver = Date.now();
            return outageOver - outageSince;
          })();
        }
      },
    );
    clearInterval(progress);
    await restart;
    const outageMs = (await outage) ?? -1;

    await waitUntilAllDone(log.dir, accepted);
    const seconds = (Date.now() - started) / 1000;
    // Let a verdict still being written land before the logs are read for the last time.
    await delay(500);
    const alive = processes.filter((p) => p.pid !== killedPid);
    for (const p of alive) p.kill('SIGTERM');
    const codes = await Promise.all(alive.map((p) => p.exited));
    return {
      accepted,
      acceptedAsDuplicate,
      refused,
      connectionErrors,
      unexpected,
      killedPid,
      outageMs,
      refusedDuringOutage,
      runs: collectRuns(log.dir),
      seconds,
      webExitCodes: codes.slice(0, options.webs),
      workerExitCodes: codes.slice(options.webs),
    };
  } finally {
    agent.destroy();
    for (const p of processes) p.kill('SIGKILL');
    await postgres?.stop();
    postgres?.cleanup();
    log.remove();
  }
}
