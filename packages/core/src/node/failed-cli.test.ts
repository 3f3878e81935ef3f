import { describe, expect, it } from 'vitest';
import { createReceiver } from '@churn-risk/core';
import { createDurableQueue, createMemoryStore, type DurableQueue } from '@churn-risk/core/store';
import {
  EXIT,
  failedCliHelp,
  hidePassword,
  printable,
  redactUrl,
  runFailedCli,
  type FailedCliBackend,
} from '@churn-risk/core/cli';
import { createTestDelivery } from '@churn-risk/core/testing';

// The failed-set CLI shared by the back ends' bins, on the reference store (the Redis and Postgres
// bins run it on real servers in their packages' tests).

const SECRET = 'whsec_failed_cli';
const URL_WITH_PASSWORD = 'memory://ops:s3cret-pass@store.internal:7000/alerts';

interface Run {
  code: number;
  out: string;
  err: string;
}

/** A memory-store queue with `count` failed alerts, the second one's error full of escapes. */
async function queueWithFailed(count: number): Promise<DurableQueue> {
  const queue = createDurableQueue(createMemoryStore(), { pollIntervalMs: 5 });
  const quiet = (): void => undefined;
  const logger = { debug: quiet, info: quiet, warn: quiet, error: quiet };
  const receiver = createReceiver({ secret: SECRET, queue, retries: 0, logger });
  let n = 0;
  receiver.on('churn_risk_alert', () => {
    n++;
    throw new Error(n === 2 ? 'CRM down\n\u001b[31mred' : 'CRM down');
  });
  for (let i = 0; i < count; i++) {
    const { headers, body } = createTestDelivery({ userId: `user_${i}` }, { secret: SECRET });
    expect((await receiver.handle({ method: 'POST', headers, body })).status).toBe(202);
    // One at a time, so that the second failure is the second alert's.
    await receiver.drain({ timeoutMs: 5_000 });
  }
  await receiver.close({ timeoutMs: 5_000 });
  return queue;
}

function backendOf(
  queue: DurableQueue,
  opened: { scope?: string | undefined; disposed: number; closed: number },
): FailedCliBackend {
  return {
    bin: 'churn-risk-memory',
    store: 'Memory',
    urlFlag: 'store',
    urlEnv: 'CHURN_RISK_TEST_STORE_URL',
    schemes: ['memory'],
    scope: { flag: 'prefix', help: 'A prefix' },
    keptBy: 'kept in memory',
    describe: redactUrl,
    open(_url, scope) {
      opened.scope = scope;
      return {
        queue: {
          failed: (options) => queue.failed(options),
          retry: (id) => queue.retry(id),
          retryAll: () => queue.retryAll(),
          health: () => queue.health?.() ?? Promise.resolve({ reachable: true }),
          close: async () => {
            opened.closed++;
          },
        },
        dispose: () => {
          opened.disposed++;
        },
      };
    },
  };
}

async function run(backend: FailedCliBackend, args: string[]): Promise<Run> {
  let out = '';
  let err = '';
  const code = await runFailedCli(backend, args, {
    out: (text) => (out += text),
    err: (text) => (err += text),
  });
  return { code, out, err };
}

describe('runFailedCli', () => {
  it('lists failed alerts under a header row, escaping control characters, and as JSON lines', async () => {
    const queue = await queueWithFailed(2);
    const opened: { scope?: string | undefined; disposed: number; closed: number } = {
      disposed: 0,
      closed: 0,
    };
    const backend = backendOf(queue, opened);
    const listed = await run(backend, ['failed', 'list', '--store', URL_WITH_PASSWORD]);
    expect(listed.code).toBe(EXIT.ok);
    const [header, ...rows] = listed.out.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+ALERT\s+TRIES\s+FAILED AT\s+ERROR$/);
    expect(rows).toHaveLength(2);
    expect(listed.out).toContain('CRM down\\n\\u001b[31mred');
    expect(listed.out).not.toContain('\u001b');
    expect(opened).toMatchObject({ closed: 1, disposed: 1 });

    const json = await run(backend, [
      'failed',
      'list',
      '--json',
      '--limit',
      '1',
      '--store',
      URL_WITH_PASSWORD,
    ]);
    const lines = json.out.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ tries: 1 });

    const scoped = await run(backend, [
      'failed',
      'list',
      '--prefix',
      'p1',
      '--store',
      URL_WITH_PASSWORD,
    ]);
    expect(scoped.code).toBe(EXIT.ok);
    expect(opened.scope).toBe('p1');
  });

  it('retries one alert by id, then all of them, and says when an id is not failed', async () => {
    const queue = await queueWithFailed(3);
    const backend = backendOf(queue, { disposed: 0, closed: 0 });
    const [first] = await queue.failed({ limit: 1 });
    const one = await run(backend, [
      'failed',
      'retry',
      first?.id ?? '',
      '--store',
      URL_WITH_PASSWORD,
    ]);
    expect(one).toEqual({ code: EXIT.ok, out: `Retrying ${first?.id ?? ''}.\n`, err: '' });
    expect((await queue.counts()).failed).toBe(2);
    const all = await run(backend, ['failed', 'retry', '--all', '--store', URL_WITH_PASSWORD]);
    expect(all.out).toBe('Retrying 2 failed alert(s).\n');
    expect((await queue.counts()).failed).toBe(0);
    const missing = await run(backend, ['failed', 'retry', 'nope', '--store', URL_WITH_PASSWORD]);
    expect(missing.code).toBe(EXIT.failed);
    expect(missing.err).toBe('churn-risk-memory: no failed alert "nope".\n');
  });

  it('refuses bad usage with exit 2 and a pointer to --help, before opening anything', async () => {
    const opened = { disposed: 0, closed: 0 };
    const backend = backendOf(await queueWithFailed(0), opened);
    const cases: [string[], string][] = [
      [['failed', 'list'], '--store <url> is required (or set $CHURN_RISK_TEST_STORE_URL).'],
      [['failed', 'list', '--store', 'redis://x'], '--store must be a memory:// URL.'],
      [['failed', 'drop', '--store', URL_WITH_PASSWORD], 'the action must be "list" or "retry"'],
      [['failed', 'retry', '--store', URL_WITH_PASSWORD], '"retry" takes one id or --all.'],
      [
        ['failed', 'retry', 'a', '--all', '--store', URL_WITH_PASSWORD],
        '"retry" takes one id or --all.',
      ],
      [['failed', 'list', 'a', '--store', URL_WITH_PASSWORD], '"list" takes no id and no --all.'],
      [
        ['failed', 'list', '--limit', '0', '--store', URL_WITH_PASSWORD],
        '--limit must be a whole number of at least 1',
      ],
      [
        ['failed', 'list', '--limitt', '3', '--store', URL_WITH_PASSWORD],
        'unknown option --limitt; did you mean --limit?',
      ],
      [['list'], 'the command must be "failed list|retry".'],
    ];
    for (const [args, message] of cases) {
      const result = await run(backend, args);
      expect(result.code, args.join(' ')).toBe(EXIT.usage);
      expect(result.err).toContain(message);
      expect(result.err).toContain('Run "churn-risk-memory --help" for usage.');
    }
    expect(opened.closed).toBe(0);
    const help = await run(backend, ['--help']);
    expect(help).toEqual({ code: EXIT.ok, out: failedCliHelp(backend), err: '' });
    expect(help.out).toContain('--store <url>');
    expect(help.out).toContain('CHURN_RISK_TEST_STORE_URL');
  });

  it('names the closest flag to a misspelt one, instead of parseArgs text', async () => {
    const backend = backendOf(await queueWithFailed(0), { disposed: 0, closed: 0 });
    const cases: [string[], string][] = [
      [
        ['failed', 'list', '--limt', '3', '--store', URL_WITH_PASSWORD],
        '--limt; did you mean --limit?',
      ],
      [
        ['failed', 'list', '--limt=3', '--store', URL_WITH_PASSWORD],
        '--limt; did you mean --limit?',
      ],
      [['failed', 'list', '--stor', URL_WITH_PASSWORD], '--stor; did you mean --store?'],
      [
        ['failed', 'list', '--prefx', 'p', '--store', URL_WITH_PASSWORD],
        '--prefx; did you mean --prefix?',
      ],
      [['failed', 'retry', '--al', '--store', URL_WITH_PASSWORD], '--al; did you mean --all?'],
      [['failed', 'list', '--jsno', '--store', URL_WITH_PASSWORD], '--jsno; did you mean --json?'],
      [
        ['failed', 'list', '--store', URL_WITH_PASSWORD, '--ofset', '2'],
        '--ofset; did you mean --offset?',
      ],
      [['failed', 'list', '--xyzzy', '--store', URL_WITH_PASSWORD], '--xyzzy.'],
      [['failed', 'list', '-q', '--store', URL_WITH_PASSWORD], '-q.'],
    ];
    for (const [args, message] of cases) {
      const result = await run(backend, args);
      expect(result.code, args.join(' ')).toBe(EXIT.usage);
      expect(result.err).toBe(
        `churn-risk-memory: unknown option ${message}\nRun "churn-risk-memory --help" for usage.\n`,
      );
    }
  });

  it('names the environment variable when the URL it holds has the wrong scheme', async () => {
    const backend = backendOf(await queueWithFailed(0), { disposed: 0, closed: 0 });
    process.env.CHURN_RISK_TEST_STORE_URL = 'redis://x';
    try {
      const result = await run(backend, ['failed', 'list']);
      expect(result.code).toBe(EXIT.usage);
      expect(result.err).toContain('$CHURN_RISK_TEST_STORE_URL must be a memory:// URL.');
    } finally {
      delete process.env.CHURN_RISK_TEST_STORE_URL;
    }
  });

  it('takes the URL from its environment variable', async () => {
    const backend = backendOf(await queueWithFailed(0), { disposed: 0, closed: 0 });
    process.env.CHURN_RISK_TEST_STORE_URL = URL_WITH_PASSWORD;
    try {
      expect(await run(backend, ['failed', 'list'])).toEqual({
        code: EXIT.ok,
        out: 'No failed alerts.\n',
        err: '',
      });
    } finally {
      delete process.env.CHURN_RISK_TEST_STORE_URL;
    }
  });

  it('names the store without its password when it is unreachable or fails', async () => {
    let available = false;
    const queue = createDurableQueue(createMemoryStore({ available: () => available }));
    const opened = { disposed: 0, closed: 0 };
    const backend = backendOf(queue, opened);
    const down = await run(backend, ['failed', 'list', '--store', URL_WITH_PASSWORD]);
    expect(down.code).toBe(EXIT.failed);
    expect(down.err).toContain(
      'cannot reach Memory at memory://ops:***@store.internal:7000/alerts',
    );
    expect(down.err).not.toContain('s3cret-pass');
    expect(opened).toMatchObject({ closed: 1, disposed: 1 });

    available = true;
    const failing: FailedCliBackend = {
      ...backend,
      open(url, scope, timeoutMs) {
        const { queue: inner, dispose } = backend.open(url, scope, timeoutMs);
        const leak = (): Promise<never> =>
          Promise.reject(new Error(`auth failed for password s3cret-pass`));
        return { queue: { ...inner, failed: leak }, ...(dispose ? { dispose } : {}) };
      },
    };
    const failed = await run(failing, ['failed', 'list', '--store', URL_WITH_PASSWORD]);
    expect(failed.code).toBe(EXIT.failed);
    expect(failed.err).toBe(
      'churn-risk-memory: auth failed for password *** (Memory at memory://ops:***@store.internal:7000/alerts).\n',
    );
  });

  it('answers a usage error, not a crash, when the back end refuses its options', async () => {
    const backend: FailedCliBackend = {
      ...backendOf(await queueWithFailed(0), { disposed: 0, closed: 0 }),
      open() {
        throw new TypeError('schema must be an identifier');
      },
    };
    const result = await run(backend, ['failed', 'list', '--store', URL_WITH_PASSWORD]);
    expect(result).toEqual({
      code: EXIT.usage,
      out: '',
      err: 'churn-risk-memory: schema must be an identifier\n',
    });
  });
});

describe('the CLI text helpers', () => {
  it('printable escapes control characters and line separators, and keeps other text', () => {
    expect(printable('a\tb\nc\u007f\u0085\u2028é')).toBe('a\\u0009b\\nc\\u007f\\u0085\\u2028é');
  });

  it('redactUrl hides the password only, and never echoes an unparsable URL', () => {
    expect(redactUrl('redis://:pw@h:1/0')).toBe('redis://:***@h:1/0');
    expect(redactUrl('redis://h:1')).toBe('redis://h:1');
    expect(redactUrl('not a url pw')).toBe('(an unparsable URL)');
  });

  it('hidePassword removes the decoded password wherever it appears', () => {
    expect(hidePassword('x p@ss y p@ss', 'postgres://u:p%40ss@h/db')).toBe('x *** y ***');
    expect(hidePassword('no password', 'postgres://u@h/db')).toBe('no password');
  });
});
