import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChurnRiskClient, churnRiskAlertSchema, verifySignature } from '@churn-risk/core';
import { createSandbox, type Sandbox } from '@churn-risk/sandbox';
import { SandboxClient } from '@churn-risk/sandbox/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/spawn-cli.js';
import {
  startReceiver,
  type ReceivedRequest,
  type TestReceiver,
} from './helpers/webhook-receiver.js';

// Environment defaults, through the real `churn-risk` command: flags default to
// CHURN_RISK_API_KEY / CHURN_RISK_WEBHOOK_SECRET, `test-alert` asks a running sandbox for a test
// alert, and an error from contacting a sandbox or receiver names the URL it contacted.

const KEY_IN_ENV = 'sk_test_from_env_1234';
const SECRET_IN_ENV = 'whsec_from_env_5678';

function signedWith(request: ReceivedRequest | undefined, secret: string): boolean {
  try {
    verifySignature({
      body: request!.body,
      signature: request!.headers['x-service-signature'],
      timestamp: request!.headers['x-service-timestamp'],
      secret,
    });
    return true;
  } catch {
    return false;
  }
}

/** A server that is not the sandbox: it answers every request `status` with `body`. */
async function startImpostor(
  status: number,
  body: unknown,
): Promise<{ url: string; server: Server }> {
  const server = createServer((_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** A URL on a port nothing listens on (it listened a moment ago). */
async function closedUrl(): Promise<string> {
  const { url, server } = await startImpostor(200, {});
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return url;
}

let receiver: TestReceiver;
let sandbox: Sandbox;

beforeAll(async () => {
  // The receiver acknowledges, except the alerts for `user_refused`.
  receiver = await startReceiver((_n, request) =>
    request.body.includes('"user_refused"') ? 500 : 202,
  );
  sandbox = await createSandbox({ port: 0 });
  const api = new ChurnRiskClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url, maxRetries: 0 });
  for (const userId of ['user_watched', 'user_refused'])
    await api.watch(userId, { threshold: 0.9, webhook: receiver.url, cooldown: '1h' });
});
afterAll(async () => {
  await sandbox.close();
  await receiver.close();
});

describe(
  'churn-risk CLI: environment defaults, test-alert, errors that name the URL',
  { timeout: 60_000 },
  () => {
    it('trigger takes --secret from $CHURN_RISK_WEBHOOK_SECRET; the flag wins over it', async () => {
      const before = receiver.received.length;
      const env = { CHURN_RISK_WEBHOOK_SECRET: SECRET_IN_ENV };
      const fromEnv = await runCli(
        ['trigger', '--url', receiver.url, '--user', 'u_env'],
        undefined,
        env,
      );
      const fromFlag = await runCli(
        ['trigger', '--url', receiver.url, '--user', 'u_flag', '--secret', 'whsec_flag'],
        undefined,
        env,
      );
      expect(fromEnv.code).toBe(0);
      expect(fromFlag.code).toBe(0);
      const [first, second] = receiver.received.slice(before);
      expect(JSON.parse(first!.body)).toMatchObject({ userId: 'u_env' });
      expect(signedWith(first, SECRET_IN_ENV)).toBe(true);
      expect(JSON.parse(second!.body)).toMatchObject({ userId: 'u_flag' });
      expect(signedWith(second, 'whsec_flag')).toBe(true);
      expect(signedWith(second, SECRET_IN_ENV)).toBe(false);
      expect(fromEnv.stdout + fromEnv.stderr).not.toContain(SECRET_IN_ENV);
    });

    it('sandbox takes --api-key and --webhook-secret from the environment, so a restart keeps a .env valid', async () => {
      const env = { CHURN_RISK_API_KEY: KEY_IN_ENV, CHURN_RISK_WEBHOOK_SECRET: SECRET_IN_ENV };
      let checked: Promise<ReceivedRequest | undefined> | undefined;
      const before = receiver.received.length;
      const run = await runCli(
        ['sandbox', '--port', '0'],
        (text, stop) => {
          const url = /URL:\s+(\S+)/.exec(text)?.[1];
          if (url === undefined || checked || !text.includes('Press Ctrl+C')) return;
          // The app's .env: the same key as before the restart, and a delivery its secret verifies.
          const api = new ChurnRiskClient({ apiKey: KEY_IN_ENV, baseUrl: url, maxRetries: 0 });
          const developer = new SandboxClient({ baseUrl: url, apiKey: KEY_IN_ENV });
          checked = (async () => {
            await api.watch('user_env', { threshold: 0.9, webhook: receiver.url, cooldown: '1h' });
            await developer.sendTestAlert('user_env');
            for (let waited = 0; waited < 5_000; waited += 50) {
              const found = receiver.received
                .slice(before)
                .find((r) => r.body.includes('user_env'));
              if (found) return found;
              await new Promise((resolve) => setTimeout(resolve, 50));
            }
            return undefined;
          })().finally(stop);
        },
        env,
      );
      expect(run.stdout).toMatch(
        /API key:\s+sk_test_from_env_1234 \(from \$CHURN_RISK_API_KEY\)\n/,
      );
      expect(run.stdout).toMatch(
        /Webhook secret:\s+whsec_from_env_5678 \(from \$CHURN_RISK_WEBHOOK_SECRET\)\n/,
      );
      expect(run.stdout).toMatch(/dashboard#key=sk_test_from_env_1234/);
      expect(signedWith(await checked, SECRET_IN_ENV)).toBe(true);
      expect(run.code).toBe(0);
    });

    it('sandbox: flags win over the environment; a bad value in the environment names the variable, not the value', async () => {
      const [flagged, badKey, emptyVars] = await Promise.all([
        runCli(
          ['sandbox', '--port', '0', '--api-key', 'sk_test_flag', '--webhook-secret', 'whsec_flag'],
          (text, stop) => {
            if (text.includes('Press Ctrl+C')) stop();
          },
          { CHURN_RISK_API_KEY: KEY_IN_ENV, CHURN_RISK_WEBHOOK_SECRET: SECRET_IN_ENV },
        ),
        runCli(['sandbox', '--port', '0'], undefined, { CHURN_RISK_API_KEY: 'sk_test with space' }),
        runCli(
          ['sandbox', '--port', '0'],
          (text, stop) => {
            if (text.includes('Press Ctrl+C')) stop();
          },
          { CHURN_RISK_API_KEY: '', CHURN_RISK_WEBHOOK_SECRET: '' },
        ),
      ]);
      expect(flagged.stdout).toMatch(/API key:\s+sk_test_flag\n/);
      expect(flagged.stdout).toMatch(/Webhook secret:\s+whsec_flag\n/);
      expect(flagged.stdout).not.toContain(KEY_IN_ENV);
      expect(badKey.code).toBe(2);
      expect(badKey.stderr).toMatch(/CHURN_RISK_API_KEY: apiKey must not contain whitespace/);
      expect(badKey.stderr).not.toContain('sk_test with space');
      expect(badKey.stdout).not.toMatch(/sandbox running/);
      // Empty variables count as unset: random credentials, as without them.
      expect(emptyVars.stdout).toMatch(/API key:\s+sk_test_\S+\n/);
      expect(emptyVars.stdout).toMatch(/Webhook secret:\s+whsec_\S+\n/);
    });

    it('test-alert <userId> asks the running sandbox for a test alert to the watch and prints its first try', async () => {
      const before = receiver.received.length;
      const connection = ['--url', sandbox.url];
      const env = { CHURN_RISK_API_KEY: sandbox.apiKey };
      const [ok, refused, unwatched, help] = await Promise.all([
        runCli(['test-alert', 'user_watched', ...connection], undefined, env),
        runCli(['test-alert', 'user_refused', ...connection], undefined, env),
        runCli(['test-alert', 'user_nobody', ...connection], undefined, env),
        runCli(['test-alert', '--help']),
      ]);
      expect(ok.code).toBe(0);
      expect(ok.stdout).toMatch(
        new RegExp(
          `^Test alert for user_watched \\(score [\\d.]+, \\w+\\) as (dlv_\\S+) to ${receiver.url}\\nFirst try: HTTP 202 \\(\\d+ ms\\); delivered\\n$`,
        ),
      );
      const id = /as (dlv_\S+)/.exec(ok.stdout)?.[1];
      expect(sandbox.deliveries.get(id!)).toMatchObject({
        state: 'delivered',
        alert: { userId: 'user_watched' },
      });
      const delivered = receiver.received
        .slice(before)
        .find((r) => r.body.includes('"user_watched"'));
      expect(churnRiskAlertSchema.parse(JSON.parse(delivered!.body))).toMatchObject({
        userId: 'user_watched',
      });
      expect(signedWith(delivered, sandbox.webhookSecret)).toBe(true);

      expect(refused.code).toBe(1);
      expect(refused.stdout).toMatch(/First try: HTTP 500 \(\d+ ms\); pending\n$/);

      expect(unwatched.code).toBe(1);
      expect(unwatched.stderr).toBe(
        `churn-risk test-alert: user "user_nobody" has no watch in the sandbox at ${sandbox.url}; create one first (client.watch(userId, { threshold, webhook, cooldown })).\n`,
      );
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/^Usage: churn-risk test-alert <userId>/);
      expect(help.stdout).toMatch(
        /--api-key <key>\s+The sandbox's API key \(default \$CHURN_RISK_API_KEY\)/,
      );
    });

    it('an error from contacting a sandbox names the URL that answered (or could not be reached), never the key', async () => {
      const key = 'sk_test_wrong_but_secret';
      // Another process holds the port and refuses the key (echoing it back, as a careless one might).
      const impostor = await startImpostor(401, {
        error: { code: 'UNAUTHORIZED', message: `Invalid API key ${key}` },
      });
      const nothing = await closedUrl();
      try {
        const [deliveries, replay, testAlert, offline] = await Promise.all([
          runCli(['deliveries', '--url', impostor.url, '--api-key', key]),
          runCli(['replay', 'dlv_1', '--url', impostor.url], undefined, {
            CHURN_RISK_API_KEY: key,
          }),
          runCli(['test-alert', 'u1'], undefined, {
            CHURN_RISK_SANDBOX_URL: impostor.url,
            CHURN_RISK_API_KEY: key,
          }),
          runCli(['deliveries', '--url', nothing, '--api-key', key]),
        ]);
        for (const [name, run] of [
          ['deliveries', deliveries],
          ['replay', replay],
          ['test-alert', testAlert],
        ] as const) {
          expect(run.code, name).toBe(1);
          expect(run.stderr, name).toContain(
            `churn-risk ${name}: ${impostor.url} answered HTTP 401 UNAUTHORIZED: Invalid API key`,
          );
          expect(run.stderr, name).toMatch(/another process may hold the port/);
          expect(run.stderr + run.stdout, name).not.toContain(key);
        }
        expect(offline.code).toBe(1);
        expect(offline.stderr).toMatch(
          new RegExp(
            `^churn-risk deliveries: could not reach ${nothing} \\(NETWORK_ERROR: .*ECONNREFUSED`,
          ),
        );
        expect(offline.stderr).not.toContain(key);
      } finally {
        await new Promise<void>((resolve) => impostor.server.close(() => resolve()));
      }
    });

    it('trigger: a refused or failed delivery names the receiver URL, never the secret', async () => {
      const impostor = await startImpostor(401, { error: 'bad signature' });
      const nothing = await closedUrl();
      try {
        const env = { CHURN_RISK_WEBHOOK_SECRET: SECRET_IN_ENV };
        const [refused, offline] = await Promise.all([
          runCli(['trigger', '--url', `${impostor.url}/hooks`], undefined, env),
          runCli(['trigger', '--url', `${nothing}/hooks`], undefined, env),
        ]);
        expect(refused.code).toBe(1);
        expect(refused.stdout).toMatch(/^HTTP 401 \(\d+ ms\)\n/);
        expect(refused.stderr).toBe(
          `churn-risk trigger: ${impostor.url}/hooks answered HTTP 401; not acknowledged.\n`,
        );
        expect(offline.code).toBe(1);
        expect(offline.stderr).toMatch(
          new RegExp(`^churn-risk trigger: delivery to ${nothing}/hooks failed: .*ECONNREFUSED`),
        );
        for (const run of [refused, offline])
          expect(run.stdout + run.stderr).not.toContain(SECRET_IN_ENV);
      } finally {
        await new Promise<void>((resolve) => impostor.server.close(() => resolve()));
      }
    });
  },
);
