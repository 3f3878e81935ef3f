import { createTestDelivery } from '@churn-risk/core/testing';
import type { AlertContext } from '@churn-risk/core';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAlertHandler } from '../src/alert-handler.js';
import { openIdempotentStore, readRecords } from '../src/idempotent-store.js';

describe('the worker handler (idempotent by alert identity)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'churn-risk-durable-example-'));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes one record per alert identity, also when run again by a restarted worker', async () => {
    const file = join(dir, 'tasks.jsonl');
    const { alert } = createTestDelivery({ userId: 'acme' }, { secret: 'whsec_x' });
    const context: AlertContext = {
      id: `${alert.userId}:${alert.triggeredAt}`,
      receivedAt: new Date(),
      attempt: 0,
      event: 'churn_risk_alert',
      signal: new AbortController().signal,
      stalls: 0,
      handlerId: undefined,
      supersededBy: undefined,
      idempotencyKey: `${alert.userId}:${alert.triggeredAt}`,
    };
    const lines: string[] = [];
    const log = (line: string): void => {
      lines.push(line);
    };
    await createAlertHandler({ store: openIdempotentStore(file), log })(alert, context);
    // A new worker process (a new store over the same file) runs the same alert again.
    await createAlertHandler({ store: openIdempotentStore(file), log })(alert, context);

    expect(readRecords(file).map((record) => record.id)).toEqual([context.id]);
    expect(lines).toEqual([
      `handling ${context.id}`,
      `handled ${context.id}`,
      `handling ${context.id}`,
      `already handled ${context.id} (nothing to do)`,
    ]);
  });

  it('reads only complete lines: a line being written, or torn by a crash, is left out', async () => {
    const file = join(dir, 'torn.jsonl');
    appendFileSync(file, `${JSON.stringify({ id: 'u1:t' })}\n{"id":"u2:t","no`);
    // A reader while another process is mid-write sees the first record only.
    expect(readRecords(file).map((record) => record.id)).toEqual(['u1:t']);
    // A worker restarted after a crash mid-write cuts the torn line off; its records start lines.
    const store = openIdempotentStore(file);
    expect(store.has('u1:t')).toBe(true);
    expect(store.has('u2:t')).toBe(false);
    expect(await store.addOnce({ id: 'u2:t', note: 'again' })).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(
      `${JSON.stringify({ id: 'u1:t' })}\n${JSON.stringify({ id: 'u2:t', note: 'again' })}\n`,
    );
  });
});
