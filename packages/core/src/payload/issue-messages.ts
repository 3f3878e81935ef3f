import { config, type $ZodErrorMap, type $ZodRawIssue } from 'zod/v4/core';

/** A JSON value's type, under the names zod's issues use (`null`, `array`, `number`...). */
function typeName(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}

/** A value of an enum or literal as the message shows it: strings quoted. */
const shown = (value: unknown): string =>
  typeof value === 'string' ? JSON.stringify(value) : String(value);

/** What a length counts, for the origins of length checks. */
const UNITS: Readonly<Record<string, string | undefined>> = {
  string: 'characters',
  array: 'items',
};

/**
 * The English message of each issue an alert schema can raise, worded as zod's own English locale
 * words it (`Too big: expected number to be <=1`), so that refusals read the same as with `zod`.
 * Written here rather than loading `zod/v4/locales/en`, which holds every issue of every schema
 * and weighs more in a Worker's bundle than all these checks.
 */
function english(issue: $ZodRawIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `Invalid input: expected ${issue.expected}, received ${typeName(issue.input)}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `Invalid input: expected ${shown(issue.values[0])}`
        : `Invalid option: expected one of ${issue.values.map(shown).join('|')}`;
    case 'too_small':
    case 'too_big': {
      const small = issue.code === 'too_small';
      const bound = `${small ? '>' : '<'}${issue.inclusive === true ? '=' : ''}${String(
        small ? issue.minimum : issue.maximum,
      )}`;
      const unit = UNITS[issue.origin];
      const expected = unit === undefined ? `be ${bound}` : `have ${bound} ${unit}`;
      return `Too ${small ? 'small' : 'big'}: expected ${issue.origin} to ${expected}`;
    }
    case 'invalid_format':
      return issue.format === 'datetime' ? 'Invalid ISO datetime' : `Invalid ${issue.format}`;
    default:
      return 'Invalid input';
  }
}

/**
 * The error map of payload parsing: English messages, unless the app configured its own with
 * `z.config(...)` (`zod` configures its English locale when it loads). The payload schemas are
 * `zod/mini`, which loads no locale and would word every issue `Invalid input`.
 */
export const issueMessages: $ZodErrorMap = (issue) => {
  const { customError, localeError } = config();
  return customError === undefined && localeError === undefined ? english(issue) : undefined;
};
