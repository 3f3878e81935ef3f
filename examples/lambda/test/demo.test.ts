import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// `pnpm demo:lambda` (src/demo.ts) as a user runs it: emulators, a producer and a consumer
// function, the consumer SIGKILLed mid-batch and replaced. It must end with every alert handled
// once and exit 0.

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

function runDemo(): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@churn-risk/source', '--import', 'tsx', 'examples/lambda/src/demo.ts'],
      { cwd: ROOT, env: { ...process.env, DEMO_ALERTS: '30' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => resolve({ code, out }));
  });
}

describe('pnpm demo:lambda', () => {
  it('kills a consumer mid-batch and shows every alert handled once', async () => {
    const { code, out } = await runDemo();
    expect(out).toMatch(/killed the consumer \(SIGKILL\) in the middle of a batch: [1-9]\d* alert/);
    expect(out).toMatch(/The killed batch, delivered again: (\d+) of \1 alert/);
    expect(out).toContain('8. Every alert handled once: 30 of 30, none twice, none failed.');
    expect(code, out).toBe(0);
  }, 120_000);
});
