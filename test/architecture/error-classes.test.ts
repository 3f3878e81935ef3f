import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ChurnRiskError } from '@churn-risk/core';
import { ContractError } from '../../packages/core/src/testing/support.js';
import { UsageError as SandboxUsageError } from '../../packages/sandbox/src/cli/cli-io.js';
import { SandboxContactError } from '../../packages/sandbox/src/cli/connection-flags.js';
import { ApiError } from '../../packages/sandbox/src/server/api-error.js';

// Every error class a package entry exports extends `ChurnRiskError` and carries a non-empty
// string `code`: found by importing each entry of each package's `exports` and taking the exported
// functions whose prototype is an Error's, so that a class added later is checked too.

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Every public entry's import specifier: `@churn-risk/core`, `@churn-risk/core/store`, ... */
function specifiers(): string[] {
  const found: string[] = [];
  for (const dir of readdirSync(join(ROOT, 'packages')).sort()) {
    const manifest = JSON.parse(
      readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8'),
    ) as { name: string; exports?: Record<string, unknown> };
    for (const subpath of Object.keys(manifest.exports ?? {})) {
      if (subpath === './package.json') continue;
      found.push(subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`);
    }
  }
  return found;
}

type ErrorClass = abstract new (...args: never[]) => Error;

/** How to make an instance of each class, with the arguments its constructor takes. */
const MAKE: Record<string, (Class: new (...args: never[]) => Error) => Error> = {
  WebhookVerificationError: (C) =>
    new (C as never as new (c: string, m: string) => Error)('INVALID_SIGNATURE', 'x'),
  DeliveryRejectedError: (C) =>
    new (C as never as new (c: string, m: string) => Error)('INVALID_PAYLOAD', 'x'),
  ReceiverUnavailableError: (C) =>
    new (C as never as new (c: string, m: string) => Error)('CLOSED', 'x'),
  IntegrationError: (C) =>
    new (C as never as new (c: string, m: string) => Error)('RAW_BODY_MISSING', 'x'),
  SyncHandlingFailedError: (C) => new (C as never as new (m: string) => Error)('x'),
  NonRetryableError: (C) => new (C as never as new (m: string) => Error)('x'),
  HandlersFailedError: (C) =>
    new (C as never as new (f: unknown[]) => Error)([
      { index: 0, id: 'crm', error: new Error('x') },
    ]),
  AlertStalledError: (C) => new (C as never as new (s: number) => Error)(3),
  AlertCutOffError: (C) =>
    new (C as never as new (b: number, p: string[]) => Error)(30_000, ['crm']),
  ServiceError: (C) =>
    new (C as never as new (i: object) => Error)({
      code: 'TIMEOUT',
      message: 'x',
      retryable: true,
    }),
  PostgresStoreError: (C) =>
    new (C as never as new (w: string, e: unknown) => Error)('db', new Error('x')),
  PostgresSchemaError: (C) =>
    new (C as never as new (s: string, m: string) => Error)('churn_risk', 'x'),
  SqsQueueError: (C) =>
    new (C as never as new (o: string, r: string, a: string) => Error)(
      'failedTable',
      't',
      'ResourceNotFoundException',
    ),
  OpsError: (C) =>
    new (C as never as new (c: string, s: number, m: string) => Error)('NOT_FOUND', 404, 'x'),
};

const found = new Map<string, ErrorClass>();
for (const specifier of specifiers()) {
  const entry = (await import(specifier)) as Record<string, unknown>;
  for (const [name, value] of Object.entries(entry)) {
    if (typeof value === 'function' && value.prototype instanceof Error) {
      found.set(`${specifier} ${name}`, value as ErrorClass);
    }
  }
}

describe('the error classes of every package entry', () => {
  it('are found, in core and in the back ends', () => {
    const names = new Set([...found.keys()].map((key) => key.split(' ')[1]));
    for (const name of [
      'ChurnRiskError',
      'HandlersFailedError',
      'PostgresStoreError',
      'SqsQueueError',
      'OpsError',
    ]) {
      expect(names).toContain(name);
    }
  });

  for (const [key, Class] of found) {
    const name = key.split(' ')[1] as string;
    if (Class === ChurnRiskError) continue;
    it(`${key} extends ChurnRiskError and has a string code`, () => {
      expect(Class.prototype).toBeInstanceOf(ChurnRiskError);
      const make = MAKE[name];
      expect(make, `say in MAKE how to make a ${name}`).toBeTypeOf('function');
      const error = make!(Class as new (...args: never[]) => Error);
      expect(error).toBeInstanceOf(ChurnRiskError);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe(name);
      const { code, status } = error as { code?: unknown; status?: unknown };
      expect(code).toMatch(/^[A-Z0-9][A-Z0-9_]*$/);
      if (status !== undefined) expect(status).toBeGreaterThanOrEqual(400);
    });
  }
});

describe('the errors thrown to users by classes no entry exports', () => {
  it('extend ChurnRiskError too, each with a code', () => {
    const errors = [
      new ContractError('storeContract: x'),
      new SandboxUsageError('x'),
      new SandboxContactError('http://127.0.0.1:1', 'NETWORK_ERROR', undefined, 'x'),
      new ApiError('NOT_FOUND', 'x'),
    ];
    for (const error of errors) {
      expect(error).toBeInstanceOf(ChurnRiskError);
      expect(error.code).toMatch(/^[A-Z][A-Z_]*$/);
    }
    expect(new ApiError('NOT_FOUND', 'x').status).toBe(404);
  });
});
