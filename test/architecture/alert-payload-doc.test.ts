import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { churnRiskAlertSchema } from '@churn-risk/core';
import { riskTierSchema } from '@churn-risk/core/wire';
import { describe, expect, it } from 'vitest';

// The receiver guide's table of the alert's fields is what a user reads instead of the schema: it
// must name exactly the schema's fields, in its order, and the tiers the schema takes.

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const HEADING = "## The alert's payload";

/** The rows of the first table under `HEADING` in the core README, as arrays of cells. */
function payloadTable(): string[][] {
  const text = readFileSync(join(ROOT, 'packages', 'core', 'README.md'), 'utf8');
  const start = text.indexOf(`\n${HEADING}\n`);
  expect(start, `the core README has a section "${HEADING}"`).toBeGreaterThan(-1);
  const section = text.slice(start + HEADING.length + 2).split('\n## ')[0] ?? '';
  const lines = section.split('\n');
  const first = lines.findIndex((line) => line.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
  }
  // The header row and the `|---|` row are not fields.
  return rows.slice(2);
}

describe("the core README: The alert's payload", () => {
  it("names exactly the schema's fields, in the schema's order", () => {
    const documented = payloadTable().map(([field]) => field?.replace(/^`|`$/g, ''));
    expect(documented).toEqual(Object.keys(churnRiskAlertSchema.shape));
  });

  it("gives the tier's every value, and only those", () => {
    const tierRow = payloadTable().find(([field]) => field === '`tier`');
    const quoted = [...(tierRow?.[2] ?? '').matchAll(/`'([a-z]+)'`/g)].map((match) => match[1]);
    expect(quoted).toEqual(Object.values(riskTierSchema.def.entries));
  });
});
