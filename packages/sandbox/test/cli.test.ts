import { ChurnRiskClient, churnRiskAlertSchema, verifySignature } from '@churn-risk/core';
import { describe, expect, it } from 'vitest';
import { runCli } from './helpers/spawn-cli.js';
import { startReceiver } from './helpers/webhook-receiver.js';

// Each spawn starts tsx (a second or two); commands run in parallel where they can.
describe('churn-risk CLI', { timeout: 60_000 }, () => {
  it('prints help at the top level and for each command', async () => {
    const [top, sandbox, trigger] = await Promise.all([
      runCli(['--help']),
      runCli(['sandbox', '--help']),
      runCli(['trigger', '--help']),
    ]);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/Usage: churn-risk <command>/);
    expect(top.stdout).toMatch(/sandbox/);
    expect(top.stdout).toMatch(/trigger/);
    expect(sandbox.code).toBe(0);
    expect(sandbox.stdout).toMatch(/--webhook-secret/);
    expect(trigger.code).toBe(0);
    expect(trigger.stdout).toMatch(/--score/);
  });

  it('exits 2 with a clear message on an unknown flag, a missing or empty flag or an unknown command', async () => {
    const [unknownFlag, missing, badScore, unknownCommand, emptySecret, emptyKey] =
      await Promise.all([
        runCli(['sandbox', '--prot', '1']),
        runCli(['trigger', '--url', 'http://127.0.0.1:9/x']),
        runCli(['trigger', '--url', 'http://127.0.0.1:9/x', '--secret', 's', '--score', '2']),
        runCli(['serve']),
        runCli(['sandbox', '--port', '0', '--webhook-secret', '']),
        runCli(['sandbox', '--port', '0', '--api-key', '']),
      ]);
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr).toMatch(/Unknown option '--prot'/);
    expect(unknownFlag.stderr).toMatch(/churn-risk sandbox --help/);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--secret is required \(or set CHURN_RISK_WEBHOOK_SECRET\)/);
    expect(badScore.code).toBe(2);
    expect(unknownCommand.code).toBe(2);
    expect(unknownCommand.stderr).toMatch(/unknown command "serve"/);
    expect(emptySecret.code).toBe(2);
    expect(emptySecret.stderr).toMatch(
      /--webhook-secret: webhookSecret must be a non-empty string/,
    );
    expect(emptySecret.stdout).not.toMatch(/sandbox running/);
    expect(emptyKey.code).toBe(2);
    expect(emptyKey.stderr).toMatch(/--api-key: apiKey must be a non-empty string/);
  });

  it('sandbox prints its URL, key and secret, serves the API, and stops cleanly on SIGINT', async () => {
    let answered: Promise<number> | undefined;
    const run = await runCli(
      ['sandbox', '--port', '0', '--api-key', 'sk_test_cli', '--webhook-secret', 'whsec_cli'],
      (text, stop) => {
        const url = /URL:\s+(\S+)/.exec(text)?.[1];
        if (url === undefined || answered) return;
        const client = new ChurnRiskClient({ apiKey: 'sk_test_cli', baseUrl: url, maxRetries: 0 });
        answered = client
          .track({ userId: 'cli', event: 'login' })
          .then((result) => result.accepted)
          .finally(stop);
      },
    );
    expect(run.stdout).toMatch(/URL:\s+http:\/\/127\.0\.0\.1:\d+/);
    expect(run.stdout).toMatch(/API key:\s+sk_test_cli/);
    expect(run.stdout).toMatch(/Webhook secret:\s+whsec_cli/);
    expect(await answered).toBe(1);
    expect(run.stdout).toMatch(/sandbox stopped/);
    expect(run.code).toBe(0);
  });

  it('trigger sends a signed alert that verifies, prints the answer, and exits by the status', async () => {
    const receiver = await startReceiver((n) => (n === 0 ? 202 : 500));
    try {
      const ok = await runCli([
        'trigger',
        '--url',
        receiver.url,
        '--secret',
        'whsec_t',
        '--user',
        'u9',
        '--score',
        '0.42',
      ]);
      expect(ok.code).toBe(0);
      expect(ok.stdout).toMatch(/^HTTP 202 \(\d+ ms\)\n\{"received":true\}\n$/);
      const [request] = receiver.received;
      verifySignature({
        body: request!.body,
        signature: request!.headers['x-service-signature'],
        timestamp: request!.headers['x-service-timestamp'],
        secret: 'whsec_t',
      });
      expect(() =>
        verifySignature({
          body: request!.body,
          signature: request!.headers['x-service-signature'],
          timestamp: request!.headers['x-service-timestamp'],
          secret: 'whsec_other',
        }),
      ).toThrow();
      expect(churnRiskAlertSchema.parse(JSON.parse(request!.body))).toMatchObject({
        userId: 'u9',
        score: 0.42,
        tier: 'medium',
      });
      const failed = await runCli(['trigger', '--url', receiver.url, '--secret', 'whsec_t']);
      expect(failed.code).toBe(1);
      expect(failed.stdout).toMatch(/^HTTP 500/);
    } finally {
      await receiver.close();
    }
  });
});
