const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * `value` as HTML text, safe in element content and in a quoted attribute: every string that
 * reaches the page from an alert, a store or a request goes through it.
 */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

/** A tagged template that escapes every interpolated value unless it is already `Html`. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += toHtml(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

/** Markup that was built by `html` (escaped already). */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

function toHtml(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(toHtml).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(value);
}
