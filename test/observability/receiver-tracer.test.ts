import { execFile } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createReceiver } from '@churn-risk/core';
import { describe, expect, it } from 'vitest';
import type { SpanJson } from './span-json.js';

// The `tracer` option on Node (on Workers, it is tested in workerd by
// workerd-tracing.test.ts): the scenario runs in a child process, as otel-scenarios.ts does.
const here = dirname(fileURLToPath(import.meta.url));

async function scenario(): Promise<{ status: number; spans: SpanJson[]; globalRecords: boolean }> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--conditions=@churn-risk/source', '--import', 'tsx', 'tracer-option-scenario.ts'],
    { cwd: here, encoding: 'utf8', timeout: 120_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Awaited<
    ReturnType<typeof scenario>
  >;
}

describe('the tracer option on Node', () => {
  it('gets the spans though no SDK is registered, and the handler`s span is a child of its try', async () => {
    const { status, spans, globalRecords } = await scenario();
    expect(status).toBe(202);
    expect(globalRecords).toBe(false);
    const named = (name: string): SpanJson | undefined => spans.find((span) => span.name === name);
    expect(spans.map((span) => span.name).sort()).toEqual([
      'crm update',
      'process churn_risk_alert',
      'receive churn_risk_alert',
    ]);
    const receive = named('receive churn_risk_alert');
    const processed = named('process churn_risk_alert');
    expect(processed?.links).toEqual([{ traceId: receive?.traceId, spanId: receive?.spanId }]);
    expect(named('crm update')?.parentSpanId).toBe(processed?.spanId);
  });

  it('is checked at creation: anything but a tracer is a TypeError', () => {
    expect(() => createReceiver({ secret: 'whsec_x', tracer: {} as never })).toThrow(
      /tracer must be an OpenTelemetry Tracer/,
    );
  });
});
