/**
 * `context.supersededBy` of a taken alert: the newest time accepted for its user (ISO 8601) when
 * it is later than the alert's own `triggeredAt`, else undefined.
 */
export function supersededBy(
  alert: { readonly triggeredAt: string },
  newest: number | undefined,
): string | undefined {
  return newest !== undefined && newest > Date.parse(alert.triggeredAt)
    ? new Date(newest).toISOString()
    : undefined;
}
