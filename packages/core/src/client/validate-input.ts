import type { z } from 'zod';
import { ServiceError } from './service-error.js';

/** The issues of a failed validation, as `details` of a `VALIDATION_ERROR`. */
export interface ValidationIssue {
  path: string;
  message: string;
}

function pathText(label: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (text, key) => (typeof key === 'number' ? `${text}[${key}]` : `${text}.${String(key)}`),
    label,
  );
}

/** A `VALIDATION_ERROR` with the given message; nothing was sent. */
export function validationError(
  message: string,
  details?: readonly ValidationIssue[],
): ServiceError {
  return new ServiceError({ code: 'VALIDATION_ERROR', message, details });
}

/**
 * Parses `value` with `schema` or throws a `VALIDATION_ERROR` naming each bad field under `label`
 * (`traits.mrr: ...`). Returns the parsed value: what goes on the wire.
 */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  label: string,
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    path: pathText(label, issue.path),
    message: issue.message,
  }));
  const text = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  throw validationError(`Invalid argument: ${text}`, issues);
}
