/** Replaces every occurrence of `secret` in `text` so that no message can carry the API key. */
export function redact(text: string, secret: string): string {
  return secret === '' ? text : text.split(secret).join('[redacted]');
}
