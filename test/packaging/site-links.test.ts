import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkSite } from '../../scripts/check-site-links.js';

// The link check of the documentation site (`pnpm run docs` runs it on docs/api/): it must find a
// link to a missing page and to a missing anchor, and pass every kind of good link.

const site = mkdtempSync(join(tmpdir(), 'churn-risk-site-'));
afterAll(() => rmSync(site, { recursive: true, force: true }));

function page(path: string, html: string): void {
  mkdirSync(join(site, path, '..'), { recursive: true });
  writeFileSync(join(site, path), `<html><body>${html}</body></html>`);
}

describe('the site link check', () => {
  it('passes good links and reports each broken one with its page and reason', () => {
    page(
      'index.html',
      '<a href="documents/redis.html#takeover-time">takeover</a><a href="#top" id="top">top</a>',
    );
    page(
      'documents/redis.html',
      '<h2 id="takeover-time">Takeover</h2><a href="../index.html">home</a><a href="https://example.com/x#y">out</a>' +
        '<a href="../documents/postgres.html">gone</a><a href="../index.html#nowhere">lost</a><img src="../media/a.png">',
    );
    mkdirSync(join(site, 'media'), { recursive: true });
    writeFileSync(join(site, 'media', 'a.png'), '');
    const { pages, links, broken } = checkSite(site);
    expect(pages).toBe(2);
    expect(links).toBe(6);
    expect(broken).toEqual([
      { page: 'documents/redis.html', link: '../documents/postgres.html', reason: 'no such file' },
      { page: 'documents/redis.html', link: '../index.html#nowhere', reason: 'no such anchor' },
    ]);
  });
});
