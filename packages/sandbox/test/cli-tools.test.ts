import { ChurnRiskClient } from '@churn-risk/core';
import { createManualClock, createSandbox, type Sandbox } from '@churn-risk/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/run-cli.js';
import { startReceiver, type TestReceiver } from './helpers/webhook-receiver.js';

// The developer-tool commands in process (the spawned CLI is covered by cli.test.ts).

interface Run {
  code: number;
  out: string;
  err: string;
}

async function run(
  args: string[],
  stop?: AbortSignal,
  onOut?: (out: string) => void,
): Promise<Run> {
  let out = '';
  let err = '';
  const io = {
    out: (text: string) => {
      out += text;
      onOut?.(out);
    },
    err: (text: string) => (err += text),
  };
  const code = await runCli(args, io, stop);
  return { code, out, err };
}

let sandbox: Sandbox;
let receiver: TestReceiver;
let api: ChurnRiskClient;
let connection: string[];

beforeAll(async () => {
  sandbox = await createSandbox({ clock: createManualClock(Date.now()) });
  receiver = await startReceiver((n) => (n === 0 ? 500 : 202));
  api = new ChurnRiskClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url, maxRetries: 0 });
  connection = ['--url', sandbox.url, '--api-key', sandbox.apiKey];
  await api.watch('cli_user', { threshold: 0.7, webhook: receiver.url, cooldown: '1h' });
  await api.trackBulk(
    ['payment_failed', 'payment_failed', 'plan_downgraded'].map((event) => ({
      userId: 'cli_user',
      event,
    })),
  );
  await sandbox.deliveries.idle();
});
afterAll(async () => {
  await sandbox.close();
  await receiver.close();
});

describe('churn-risk deliveries, replay, trigger --set, sandbox --clock', () => {
  it('each command has --help; a bad flag or value is exit 2 with a message naming it', async () => {
    for (const command of ['deliveries', 'replay', 'test-alert', 'trigger', 'sandbox']) {
      const help = await run([command, '--help']);
      expect(help.code).toBe(0);
      expect(help.out).toMatch(new RegExp(`Usage: churn-risk ${command}`));
    }
    expect((await run(['--help'])).out).toMatch(/deliveries[\s\S]*replay/);
    const cases: [string[], RegExp][] = [
      [['deliveries', '--stauts', 'failed', ...connection], /Unknown option '--stauts'/],
      [
        ['deliveries', '--status', 'done', ...connection],
        /--status must be one of pending, delivered, failed, got "done"/,
      ],
      [['deliveries', '--interval', '5', ...connection], /--interval must be/],
      [['deliveries', '--url', sandbox.url], /--api-key is required/],
      [['replay', ...connection], /the delivery id is required/],
      [['replay', 'a', 'b', ...connection], /Unexpected argument "b"/],
      [['test-alert', ...connection], /the user id is required/],
      [['test-alert', 'a', 'b', ...connection], /Unexpected argument "b"/],
      [
        ['test-alert', 'a', '--url', 'http://me:hunter2@127.0.0.1:4010', '--api-key', 'k'],
        /--url must not contain a user name or password\.\n/,
      ],
      [
        ['trigger', '--url', 'http://me:hunter2@127.0.0.1:9/x', '--secret', 's'],
        /--url must not contain a user name or password\.\n/,
      ],
      [
        ['trigger', '--url', receiver.url, '--secret', 's', '--set', 'score'],
        /--set takes field=value/,
      ],
      [['sandbox', '--clock', 'fast'], /--clock must be system or manual, got "fast"/],
      [['sandbox', '--duplicate-rate', '1.5'], /--duplicate-rate must be a number from 0 to 1/],
      [['sandbox', '--max-extra-delay-ms', 'x'], /--max-extra-delay-ms must be a whole number/],
    ];
    for (const [args, message] of cases) {
      const result = await run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.err).toMatch(message);
      expect(result.err).toMatch(new RegExp(`churn-risk ${args[0]} --help`));
      expect(result.err).not.toContain('hunter2');
    }
  });

  it('deliveries prints the log as a table, filtered by --status and --user', async () => {
    const all = await run(['deliveries', ...connection]);
    expect(all.code).toBe(0);
    const [header, row] = all.out.split('\n');
    expect(header).toMatch(/^ID\s+USER\s+STATE\s+TRIES\s+LAST TRY\s+NEXT TRY$/);
    expect(row).toMatch(/^dlv_\S+\s+cli_user\s+pending\s+1\s+HTTP 500 \(\d+ ms\)\s+\d{4}-/);
    const none = await run(['deliveries', '--status', 'delivered', ...connection]);
    expect(none.out).toBe('No deliveries.\n');
    const other = await run(['deliveries', '--user', 'someone_else', ...connection]);
    expect(other.out).toBe('No deliveries.\n');
  });

  it('deliveries --follow prints each new try until stopped', async () => {
    const stop = new AbortController();
    let advanced = false;
    const following = run(
      ['deliveries', '--follow', '--interval', '50', ...connection],
      stop.signal,
      (out) => {
        if (!advanced && out.includes('NEXT TRY')) {
          advanced = true; // the table is out: now the retry falls due
          (sandbox.clock as ReturnType<typeof createManualClock>).advance(60_000);
        }
        if (/try 2: HTTP 202/.test(out)) stop.abort();
      },
    );
    const result = await following;
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/\n\S+Z dlv_\S+ cli_user try 2: HTTP 202 \(\d+ ms\); delivered\n$/);
  });

  it('replay <id> sends the delivery again and prints its first try; an unknown id exits 1', async () => {
    const [record] = sandbox.deliveries.list({ userId: 'cli_user' });
    const result = await run(['replay', record!.id, ...connection]);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(
      new RegExp(
        `^Replaying ${record!.id} as dlv_\\S+\\nFirst try: HTTP 202 \\(\\d+ ms\\); delivered\\n$`,
      ),
    );
    expect(sandbox.deliveries.list({ userId: 'cli_user' })).toHaveLength(2);
    const unknown = await run(['replay', 'dlv_unknown', ...connection]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/no delivery "dlv_unknown"/);
  });

  it('trigger --set customises any field and prints the answer and its latency', async () => {
    const before = receiver.received.length;
    const result = await run([
      'trigger',
      '--url',
      receiver.url,
      '--secret',
      'whsec_cli',
      '--user',
      'u_set',
      '--set',
      'score=0.95',
      '--set',
      'signals=payment_failed,seat_removed',
      '--set',
      'recommendation=Call them',
      '--set',
      'plan="pro"',
      '--set',
      'userId=007',
    ]);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^HTTP 202 \(\d+ ms\)\n\{"received":true\}\n$/);
    const alert = JSON.parse(receiver.received[before]!.body) as Record<string, unknown>;
    expect(alert).toMatchObject({
      event: 'churn_risk_alert',
      userId: '007',
      score: 0.95,
      tier: 'high',
      signals: ['payment_failed', 'seat_removed'],
      recommendation: 'Call them',
      plan: 'pro',
    });
  });

  it('sandbox --clock manual prints the dashboard URL with the key in the fragment, and chaos', async () => {
    const stop = new AbortController();
    const result = await run(
      [
        'sandbox',
        '--port',
        '0',
        '--clock',
        'manual',
        '--api-key',
        'sk_test_cli_tools',
        '--duplicate-rate',
        '0.5',
        '--chaos-seed',
        '3',
      ],
      stop.signal,
      (out) => {
        if (out.includes('Press Ctrl+C')) stop.abort();
      },
    );
    expect(result.code).toBe(0);
    expect(result.out).toMatch(
      /Dashboard:\s+http:\/\/127\.0\.0\.1:\d+\/dashboard#key=sk_test_cli_tools\n/,
    );
    expect(result.out).toMatch(/Clock:\s+manual\n/);
    expect(result.out).toMatch(/Chaos:\s+\{"duplicateRate":0.5,"seed":3\}/);
  });
});
