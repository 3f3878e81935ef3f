import { z } from 'zod';
import { bulkEventItemSchema, MAX_PAGE_LIMIT } from '../wire/schemas.js';

/** `trackBulk`'s list: at least one event; longer lists than one request holds are split. */
export const trackBulkItemsSchema = z
  .array(bulkEventItemSchema)
  .min(1, 'at least one event is required');

/** `getAllAtRiskUsers`' page size. */
export const pageSizeSchema = z
  .number()
  .int('pageSize must be a whole number')
  .min(1, 'pageSize must be at least 1')
  .max(MAX_PAGE_LIMIT, `pageSize must be at most ${MAX_PAGE_LIMIT}`);
