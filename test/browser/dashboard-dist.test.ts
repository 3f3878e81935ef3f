import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ChurnRiskClient } from '@churn-risk/core';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/example-process.js';
import { launchChromium } from './launch-chromium.js';

// The dashboard as users get it: the built CLI (bin/churn-risk.js -> dist/), plain Node with no
// source condition, serving the bundled dist/dashboard/main.js.

const packages = join(repoRoot, 'packages');
let child: ChildProcess | undefined;
let browser: Browser | undefined;
let dashboardUrl = '';

function ensureBuilt(name: string, file: string): void {
  const dir = join(packages, name);
  if (!existsSync(join(dir, file)))
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: dir, stdio: 'inherit' });
}

beforeAll(async () => {
  ensureBuilt('core', 'dist/index.js');
  ensureBuilt('sandbox', 'dist/dashboard/main.js');
  const cli = join(packages, 'sandbox', 'bin', 'churn-risk.js');
  const started = spawn(process.execPath, [cli, 'sandbox', '--port', '0', '--clock', 'manual'], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child = started;
  dashboardUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    started.stdout.setEncoding('utf8');
    started.stdout.on('data', (chunk: string) => {
      out += chunk;
      const url = /Dashboard:\s+(\S+)/.exec(out)?.[1];
      if (url !== undefined) resolve(url);
    });
    started.once('exit', (code) => reject(new Error(`the CLI exited (${code}):\n${out}`)));
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
});

describe('the built dashboard (dist/)', () => {
  it('loads from the printed URL and shows a user tracked through the API within a second', async () => {
    const url = new URL(dashboardUrl);
    expect(url.hostname).toBe('127.0.0.1');
    const key = new URLSearchParams(url.hash.slice(1)).get('key')!;
    expect(key).toMatch(/^sk_test_/);
    const page = await browser!.newPage({ viewport: { width: 1280, height: 800 } });
    const scripts: string[] = [];
    page.on('request', (request) => {
      if (request.resourceType() === 'script') scripts.push(new URL(request.url()).pathname);
    });
    await page.goto(dashboardUrl);
    await page.locator('#live', { hasText: 'Live' }).waitFor({ timeout: 10_000 });
    expect(scripts).toEqual(['/dashboard/js/main.js']); // one bundled script
    const client = new ChurnRiskClient({ apiKey: key, baseUrl: url.origin, maxRetries: 0 });
    await client.track({ userId: 'dist_user', event: 'payment_failed' });
    const row = page.locator('tr[data-user="dist_user"]');
    await row.waitFor({ timeout: 1_000 });
    expect(await row.locator('.score').textContent()).toBe('0.55');
    expect(await page.locator('#clock').textContent()).toMatch(/Manual clock/);
  });
});
