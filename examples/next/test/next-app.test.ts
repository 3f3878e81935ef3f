import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDelivery } from '@churn-risk/core/testing';
import { createSandbox } from '@churn-risk/sandbox';
import { driveAlert } from '../../../test/e2e/drive-alert.js';
import {
  newestMtime,
  nextEnv,
  nextStarted,
  runNextCommand,
  type NextRun,
} from '../../../test/support/next-process.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Builds the example with `next build` and runs it with `next start` on a free port, then sends real
// signed deliveries over HTTP to the App Router (Node.js and edge) and Pages Router routes.
// `next build` resolves the workspace packages to their dist/: they are built first when missing or
// older than their sources.

const exampleDir = fileURLToPath(new URL('..', import.meta.url));
const root = join(exampleDir, '..', '..');
const SECRET = 'whsec_example_next_test';
const HANDLER_DELAY_MS = 1500;

async function succeed(command: NextRun, what: string): Promise<void> {
  const { code } = await command.exited;
  if (code !== 0)
    throw new Error(`${what} failed (exit ${code}):\n${command.output().slice(-4000)}`);
}

/** Builds @churn-risk/core then @churn-risk/next (what this app imports) when dist/ is missing or stale. */
async function buildWorkspacePackages(): Promise<void> {
  for (const name of ['core', 'next']) {
    const dir = join(root, 'packages', name);
    const entry = join(dir, 'dist', 'index.js');
    if (existsSync(entry) && statSync(entry).mtimeMs >= newestMtime(join(dir, 'src'))) continue;
    const build = spawn('npm', ['run', 'build', '--silent'], {
      cwd: dir,
      env: nextEnv(),
      stdio: 'inherit',
    });
    const code = await new Promise<number | null>((resolve) => build.once('exit', resolve));
    if (code !== 0) throw new Error(`building packages/${name} failed (exit ${code})`);
  }
}

let server: NextRun | undefined;
let baseUrl = '';

beforeAll(async () => {
  await buildWorkspacePackages();
  // No secret at build time: the routes create their receiver on first request.
  await succeed(runNextCommand(exampleDir, ['build']), 'next build');
  server = runNextCommand(exampleDir, ['start', '--port', '0', '--hostname', '127.0.0.1'], {
    env: {
      CHURN_RISK_WEBHOOK_SECRET: SECRET,
      CHURN_RISK_EXAMPLE_HANDLER_DELAY_MS: String(HANDLER_DELAY_MS),
    },
  });
  baseUrl = await nextStarted(server);
}, 600_000);

afterAll(async () => {
  if (server && server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
});

let sequence = 0;
function delivery(secret = SECRET): { id: string; headers: Record<string, string>; body: string } {
  sequence += 1;
  const userId = `next_example_${process.pid}_${sequence}`;
  const triggeredAt = new Date().toISOString();
  return {
    id: `${userId}:${triggeredAt}`,
    ...createTestDelivery({ userId, triggeredAt }, { secret }),
  };
}

async function post(
  path: string,
  request: { headers: Record<string, string>; body: string },
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: request.headers,
    body: request.body,
  });
  return { status: response.status, body: await response.json() };
}

interface Listed {
  alerts: { id: string; route: string }[];
}

/** Polls `path` until the alert `id` is listed there (the handler ran); bounded by the test's time-out. */
async function waitUntilListed(path: string, id: string): Promise<Listed['alerts'][number]> {
  for (;;) {
    const listed = (await (await fetch(`${baseUrl}${path}`)).json()) as Listed;
    const found = listed.alerts.find((alert) => alert.id === id);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('examples/next under next start', () => {
  it('App Router route: answers 202 and the handler records the alert; the page lists it', async () => {
    const sent = delivery();
    expect(await post('/api/webhooks/churn-risk', sent)).toEqual({
      status: 202,
      body: { received: true },
    });
    expect(await waitUntilListed('/api/alerts', sent.id)).toMatchObject({ route: 'app-router' });
    const html = await (await fetch(`${baseUrl}/`)).text();
    expect(html).toContain(`data-alert-id="${sent.id}"`);
  });

  it('App Router route: answers a redelivery 202 duplicate and refuses a bad signature with 401', async () => {
    const sent = delivery();
    expect((await post('/api/webhooks/churn-risk', sent)).status).toBe(202);
    expect(await post('/api/webhooks/churn-risk', sent)).toEqual({
      status: 202,
      body: { received: true, duplicate: true },
    });
    const forged = await post('/api/webhooks/churn-risk', { ...delivery('not-the-secret') });
    expect(forged).toMatchObject({ status: 401, body: { error: { code: 'INVALID_SIGNATURE' } } });
    await waitUntilListed('/api/alerts', sent.id);
  });

  it('Pages Router route (bodyParser: false): answers 202 and the handler records the alert', async () => {
    const sent = delivery();
    expect(await post('/api/webhooks/churn-risk-pages', sent)).toEqual({
      status: 202,
      body: { received: true },
    });
    expect(await waitUntilListed('/api/alerts', sent.id)).toMatchObject({ route: 'pages-router' });
    const forged = await post('/api/webhooks/churn-risk-pages', delivery('not-the-secret'));
    expect(forged).toMatchObject({ status: 401, body: { error: { code: 'INVALID_SIGNATURE' } } });
  });

  it('edge runtime route: verifies (web HMAC) and runs the handler', async () => {
    const sent = delivery();
    expect(await post('/api/webhooks/churn-risk-edge', sent)).toEqual({
      status: 202,
      body: { received: true },
    });
    expect(await waitUntilListed('/api/webhooks/churn-risk-edge', sent.id)).toMatchObject({
      route: 'edge',
    });
    const forged = await post('/api/webhooks/churn-risk-edge', delivery('not-the-secret'));
    expect(forged).toMatchObject({ status: 401, body: { error: { code: 'INVALID_SIGNATURE' } } });
  });

  it('end to end: the sandbox service delivers a signed alert to the App Router route, handled once', async () => {
    const sandbox = await createSandbox({ webhookSecret: SECRET });
    try {
      const userId = `next_e2e_${process.pid}`;
      const record = await driveAlert(sandbox, `${baseUrl}/api/webhooks/churn-risk`, userId);
      expect(record.attempts[0]).toMatchObject({ status: 202 });
      const id = `${userId}:${record.alert.triggeredAt}`;
      expect(await waitUntilListed('/api/alerts', id)).toMatchObject({ route: 'app-router' });
      const listed = (await (await fetch(`${baseUrl}/api/alerts`)).json()) as Listed;
      expect(listed.alerts.filter((alert) => alert.id === id)).toHaveLength(1);
    } finally {
      await sandbox.close();
    }
  });

  it('on SIGTERM, next start finishes the after() work of an accepted alert before it exits', async () => {
    const running = server;
    if (!running) throw new Error('server not started');
    const sent = delivery();
    // The handler is still sleeping HANDLER_DELAY_MS when the 202 arrives and SIGTERM is sent.
    expect((await post('/api/webhooks/churn-risk', sent)).status).toBe(202);
    running.child.kill('SIGTERM');
    const { code, signal } = await running.exited;
    expect(running.output()).toContain(`[churn-risk] processed ${sent.id} via app-router`);
    expect({ code, signal }).toEqual({ code: 143, signal: null });
  });
});
