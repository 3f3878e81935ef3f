import type * as wire from '@churn-risk/core/wire';
import type { z } from 'zod';

/** One event as the API takes it (`BulkEventItem`). */
export type EventItem = z.output<typeof wire.bulkEventItemSchema>;
/** Traits as the API takes them (`UserTraits`). */
export type UserTraits = z.output<typeof wire.userTraitsSchema>;
/** A watch as the API takes it (`WatchOptions`). */
export type WatchOptions = z.output<typeof wire.watchOptionsSchema>;
/** The at-risk query, parsed. */
export type AtRiskQuery = z.output<typeof wire.atRiskQuerySchema>;
