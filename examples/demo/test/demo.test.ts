import { describe, expect, it } from 'vitest';
import { runDemo } from '../src/demo.js';

describe('the end-to-end demo', () => {
  it('runs every step against a real sandbox and receiver, with no failed check', async () => {
    const lines: string[] = [];
    const failures = await runDemo((line) => lines.push(line));
    const output = lines.join('\n');
    expect(failures, output).toBe(0);
    expect(output).toContain('handler got alice');
    expect(output).toMatch(/delivery dlv_\S+: HTTP 202 \(delivered\)/);
    expect(output).toContain('HTTP 401 INVALID_SIGNATURE');
    expect(output).toContain('the 24h cooldown holds it');
    expect(output).not.toContain('✗');
    expect(output.trim().endsWith('demo passed')).toBe(true);
  });
});
