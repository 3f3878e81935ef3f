// Checks every internal link of the built documentation site (`docs/api/`, from `pnpm run docs`):
// each `href` or `src` that is not external must lead to a file of the site, and its `#anchor`, when
// it has one, to an `id` or `name` on that page. Prints each broken link with the page it is on and
// exits 1 when there is one; else prints the number of pages and links checked.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Every `.html` file under `dir`. */
export function htmlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return htmlFiles(path);
    return entry.name.endsWith('.html') ? [path] : [];
  });
}

/**
 * Links that third-party declarations bring in and this repository cannot change: the doc comments
 * of `@types/node` that an exported interface inherits (`IncomingMessage`'s `aborted`) link to
 * Node's own pages relatively. Each entry is `page: link`.
 */
const THIRD_PARTY = new Set([
  'interfaces/_churn-risk_express.RequestWithRawBody.html: stream.html#class-streamreadable',
]);

const ATTRIBUTE = /\s(?:href|src)="([^"]*)"/g;
const ANCHOR = /\s(?:id|name)="([^"]*)"/g;

function decode(text: string): string {
  return text
    .replaceAll('&amp;', '&')
    .replaceAll('&quot;', '"')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&#39;', "'");
}

/** A link that leads nowhere: the page it is on (relative to the site), the link, and why. */
export interface BrokenLink {
  page: string;
  link: string;
  reason: 'no such file' | 'no such anchor' | 'outside the site';
}

/** The site's pages, its internal links checked, and the broken ones. */
export interface SiteCheck {
  pages: number;
  links: number;
  broken: BrokenLink[];
}

/** Checks the internal links and anchors of the site in `root`. */
export function checkSite(root: string): SiteCheck {
  const pages = htmlFiles(root);
  const anchors = new Map<string, Set<string>>();
  const anchorsOf = (file: string): Set<string> => {
    let found = anchors.get(file);
    if (found === undefined) {
      const html = readFileSync(file, 'utf8');
      found = new Set([...html.matchAll(ANCHOR)].map((match) => decode(match[1] ?? '')));
      anchors.set(file, found);
    }
    return found;
  };
  const broken: BrokenLink[] = [];
  let links = 0;
  for (const page of pages) {
    const html = readFileSync(page, 'utf8');
    for (const match of html.matchAll(ATTRIBUTE)) {
      const link = decode(match[1] ?? '');
      if (link === '' || /^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('//')) continue;
      if (THIRD_PARTY.has(`${relative(root, page)}: ${link}`)) continue;
      links += 1;
      const [path, ...rest] = link.split('#');
      const fragment = rest.join('#');
      const target =
        path === '' ? page : resolve(dirname(page), decodeURIComponent(path?.split('?')[0] ?? ''));
      if (!target.startsWith(resolve(root))) {
        broken.push({ page: relative(root, page), link, reason: 'outside the site' });
        continue;
      }
      const file =
        existsSync(target) && statSync(target).isDirectory() ? join(target, 'index.html') : target;
      if (!existsSync(file)) {
        broken.push({ page: relative(root, page), link, reason: 'no such file' });
        continue;
      }
      if (
        fragment !== '' &&
        file.endsWith('.html') &&
        !anchorsOf(file).has(decodeURIComponent(fragment))
      ) {
        broken.push({ page: relative(root, page), link, reason: 'no such anchor' });
      }
    }
  }
  return { pages: pages.length, links, broken };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? 'docs/api');
  const { pages, links, broken } = checkSite(root);
  for (const { page, link, reason } of broken) console.error(`${page}: ${link} (${reason})`);
  if (broken.length > 0) {
    console.error(`${String(broken.length)} broken links in ${String(pages)} pages`);
    process.exit(1);
  }
  console.log(`${String(pages)} pages, ${String(links)} internal links: none broken`);
}
