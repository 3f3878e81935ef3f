import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The built @churn-risk/core in a temporary project that lacks @opentelemetry/api (an optional
// peer dependency): it must import and handle deliveries. A second project that has the API and
// an SDK shows the same build does record spans when it can (so the first proves something).
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const core = join(root, 'packages', 'core');
const testModules = join(root, 'test', 'node_modules');
let project: string;

/** `name` from packages/core's (or test/'s) node_modules, linked by its real path. */
function link(modules: string, name: string, from: string): void {
  const target = join(modules, name);
  mkdirSync(dirname(target), { recursive: true });
  symlinkSync(realpathSync(join(from, name)), target, 'dir');
}

function makeProject(dir: string, withOtel: boolean): void {
  const modules = join(dir, 'node_modules');
  const installed = join(modules, '@churn-risk', 'core');
  mkdirSync(installed, { recursive: true });
  cpSync(join(core, 'package.json'), join(installed, 'package.json'));
  cpSync(join(core, 'dist'), join(installed, 'dist'), { recursive: true });
  for (const name of ['zod', '@noble/hashes']) link(modules, name, join(core, 'node_modules'));
  if (withOtel) {
    for (const name of ['@opentelemetry/api', '@opentelemetry/sdk-trace-base']) {
      link(modules, name, testModules);
    }
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
}

const SCRIPT = `
import { createReceiver } from '@churn-risk/core';
import { createTestDelivery } from '@churn-risk/core/testing';
let api = null;
try { api = await import('@opentelemetry/api'); } catch {}
let exporter;
if (api !== null) {
  const sdk = await import('@opentelemetry/sdk-trace-base');
  exporter = new sdk.InMemorySpanExporter();
  api.trace.setGlobalTracerProvider(
    new sdk.BasicTracerProvider({ spanProcessors: [new sdk.SimpleSpanProcessor(exporter)] }),
  );
}
const secret = 'whsec_packaging';
const receiver = createReceiver({ secret });
const handled = [];
receiver.on('churn_risk_alert', (alert) => { handled.push(alert.userId); });
const { headers, body } = createTestDelivery({ userId: 'user_pkg' }, { secret });
const result = await receiver.handle({ method: 'POST', headers, body });
await result.done;
const forged = await receiver.handle({ method: 'POST', headers, body: body + ' ' });
console.log(JSON.stringify({
  otel: api !== null,
  statuses: [result.status, forged.status],
  handled,
  spans: exporter ? exporter.getFinishedSpans().map((span) => span.name) : [],
}));
`;

function run(dir: string): {
  otel: boolean;
  statuses: number[];
  handled: string[];
  spans: string[];
} {
  writeFileSync(join(dir, 'main.mjs'), SCRIPT);
  const out = execFileSync(process.execPath, ['main.mjs'], { cwd: dir, encoding: 'utf8' });
  return JSON.parse(out.trim()) as ReturnType<typeof run>;
}

beforeAll(() => {
  if (!existsSync(join(core, 'dist', 'index.js'))) {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: core, stdio: 'inherit' });
  }
  project = mkdtempSync(join(tmpdir(), 'churn-risk-no-otel-'));
});
afterAll(() => {
  rmSync(project, { recursive: true, force: true });
});

describe('@churn-risk/core without @opentelemetry/api', () => {
  it('has no static import of the API in its build', () => {
    const files = readdirSync(join(core, 'dist')).filter((file) => file.endsWith('.js'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const text = readFileSync(join(core, 'dist', file), 'utf8');
      expect(text).not.toMatch(/(from|import\(|require\()\s*["']@opentelemetry\/api["']/);
    }
  });

  it('imports and handles deliveries in a project that lacks it', () => {
    const dir = join(project, 'without');
    makeProject(dir, false);
    const result = run(dir);
    expect(result).toEqual({
      otel: false,
      statuses: [202, 401],
      handled: ['user_pkg'],
      spans: [],
    });
  });

  it('records spans with the same build where the API and an SDK are installed', () => {
    const dir = join(project, 'with');
    makeProject(dir, true);
    const result = run(dir);
    expect(result.otel).toBe(true);
    expect(result.statuses).toEqual([202, 401]);
    expect(result.spans).toEqual(
      expect.arrayContaining(['receive churn_risk_alert', 'process churn_risk_alert']),
    );
  });
});
