/**
 * The walks docs/architecture.md states in its "## Architecture" section, read for the test
 * (walk.test.ts) and written by the script (walk.ts):
 *
 * - memory mode: the numbered list (the first link of each item is the step's file), and the
 *   paragraph that starts "A handler that fails" (the files a failing handler adds);
 * - "@opentelemetry/api is installed": the paragraph that says so (the files that then join);
 * - the other modes: the table whose header starts with `| file |`. A row per file (its link),
 *   a column per mode; a cell is `✓` (the file runs whether the handler succeeds or fails),
 *   `fails` or `succeeds` (only then), or empty. Two rows state the counts:
 *   `**files: handler succeeds**` and `**files: handler fails**`.
 *
 * Paths are the links' targets (relative to docs/) resolved to the repository root.
 */
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import type { Mode, Variant, Walk } from './measure.js';

export const README = 'docs/architecture.md';
/** The folder the page's links are relative to. */
const BASE = posix.dirname(README);

/** The table's column names, by mode. */
export const MODE_COLUMNS: Readonly<Record<Exclude<Mode, 'memory'>, string>> = {
  redis: 'Redis',
  postgres: 'Postgres',
  cloudflare: 'Cloudflare Queues',
};
const COUNT_ROWS: Readonly<Record<Variant, string>> = {
  succeeds: 'files: handler succeeds',
  fails: 'files: handler fails',
};

/** What the README states. */
export interface ReadmeWalks {
  /** The memory list's files, in its order. */
  memory: string[];
  /** The number the memory list's first sentence states ("crosses these 12 files"). */
  memoryCount: number | undefined;
  /** The files a failing handler adds in memory mode. */
  memoryFailingAdds: string[];
  /** The files that join when `@opentelemetry/api` is installed. */
  otelAdds: string[];
  /** The table's files, in its order. */
  tableOrder: string[];
  /** The table: per mode and variant, the files and the stated count. */
  table: Partial<Record<Mode, Record<Variant, { files: string[]; count: number | undefined }>>>;
}

/** A link's target (relative to the page's folder, docs/) from the repository root. */
export function fromCore(target: string): string {
  return posix.normalize(posix.join(BASE, target));
}

/** A repository path as a link target relative to the page's folder (docs/). */
export function toCore(path: string): string {
  return posix.relative(BASE, path);
}

function links(text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s]+\.ts)\)/g)].map((match) => fromCore(match[1] as string));
}

/** The "## Architecture" section of the README's text. */
export function architectureSection(readme: string): string {
  const start = readme.indexOf('\n## Architecture\n');
  if (start === -1) throw new Error(`${README} has no "## Architecture" section`);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
}

/** The paragraph (lines up to a blank line) that starts with `opening`. */
function paragraph(section: string, opening: string): string {
  const start = section.indexOf(`\n${opening}`);
  if (start === -1) return '';
  const end = section.indexOf('\n\n', start + 1);
  return section.slice(start, end === -1 ? undefined : end);
}

function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((cell) => cell.trim());
}

/** Reads the walks out of the README's text. */
export function parseReadmeWalks(readme: string): ReadmeWalks {
  const section = architectureSection(readme);
  const lines = section.split('\n');

  const memory: string[] = [];
  let inList = false;
  for (const line of lines) {
    if (/^\d+\. /.test(line)) {
      inList = true;
      const [first] = links(line);
      if (first !== undefined) memory.push(first);
    } else if (inList && line.trim() !== '' && !line.startsWith(' ')) {
      break; // the first list ends
    }
  }
  const counted = /crosses these (\d+) files/.exec(section);

  const table: ReadmeWalks['table'] = {};
  const tableOrder: string[] = [];
  const header = lines.findIndex((line) => /^\|\s*file\s*\|/.test(line));
  if (header !== -1) {
    const names = cells(lines[header] as string);
    const columns = new Map<number, Mode>();
    for (const [mode, name] of Object.entries(MODE_COLUMNS)) {
      const index = names.indexOf(name);
      if (index > 0) columns.set(index, mode as Mode);
    }
    for (const mode of columns.values()) {
      table[mode] = {
        succeeds: { files: [], count: undefined },
        fails: { files: [], count: undefined },
      };
    }
    for (const line of lines.slice(header + 2)) {
      if (!line.startsWith('|')) break;
      const row = cells(line);
      const first = (row[0] ?? '').replace(/\*/g, '');
      const variant = (Object.keys(COUNT_ROWS) as Variant[]).find((v) => COUNT_ROWS[v] === first);
      const [file] = links(row[0] ?? '');
      if (file !== undefined) tableOrder.push(file);
      for (const [index, mode] of columns) {
        const cell = (row[index] ?? '').replace(/\*/g, '').trim();
        const walks = table[mode];
        if (walks === undefined) continue;
        if (variant !== undefined) {
          walks[variant].count = Number(cell);
        } else if (file !== undefined) {
          if (cell === '✓' || cell === 'succeeds') walks.succeeds.files.push(file);
          if (cell === '✓' || cell === 'fails') walks.fails.files.push(file);
        }
      }
    }
  }

  return {
    memory,
    memoryCount: counted === null ? undefined : Number(counted[1]),
    memoryFailingAdds: links(paragraph(section, 'A handler that fails')),
    otelAdds: links(paragraph(section, 'When `@opentelemetry/api` is installed')),
    tableOrder,
    table,
  };
}

/** Reads docs/architecture.md under `root`. */
export function readReadmeWalks(root: string): ReadmeWalks {
  return parseReadmeWalks(readFileSync(posix.join(root, README), 'utf8'));
}

/**
 * The table's lines for `walks` (the measured ones of the three modes and both variants): the
 * files in `order` (the README's rows) first, then the others, core's last.
 */
export function renderTable(walks: readonly Walk[], order: readonly string[] = []): string[] {
  const modes = Object.keys(MODE_COLUMNS) as Exclude<Mode, 'memory'>[];
  const find = (mode: Mode, variant: Variant): Walk | undefined =>
    walks.find((walk) => walk.mode === mode && walk.variant === variant);
  const files = [
    ...new Set(
      modes.flatMap((mode) => [
        ...(find(mode, 'succeeds')?.ran ?? []),
        ...(find(mode, 'fails')?.ran ?? []),
      ]),
    ),
  ].sort((a, b) => {
    const rank = (file: string): number => {
      const index = order.indexOf(file);
      return index === -1 ? order.length + (file.startsWith('packages/core/') ? 1 : 0) : index;
    };
    return rank(a) - rank(b) || a.localeCompare(b);
  });
  const out = [
    `| file | ${modes.map((mode) => MODE_COLUMNS[mode]).join(' | ')} |`,
    `|---|${modes.map(() => ':-:').join('|')}|`,
  ];
  for (const file of files) {
    const marks = modes.map((mode) => {
      const succeeds = find(mode, 'succeeds')?.ran.includes(file) === true;
      const fails = find(mode, 'fails')?.ran.includes(file) === true;
      if (succeeds && fails) return '✓';
      if (succeeds) return 'succeeds';
      return fails ? 'fails' : '';
    });
    out.push(`| [\`${toCore(file)}\`](${toCore(file)}) | ${marks.join(' | ')} |`);
  }
  for (const variant of ['succeeds', 'fails'] as const) {
    const counts = modes.map((mode) => `**${String(find(mode, variant)?.ran.length ?? '?')}**`);
    out.push(`| **${COUNT_ROWS[variant]}** | ${counts.join(' | ')} |`);
  }
  return out;
}
