import { describe, expect, it } from 'vitest';
import { codeForStatus, STATUS_CODES } from './status-codes.js';

describe('codeForStatus', () => {
  it('maps each status to its documented code', () => {
    expect(STATUS_CODES).toEqual({
      400: 'VALIDATION_ERROR',
      401: 'UNAUTHORIZED',
      403: 'FORBIDDEN',
      404: 'NOT_FOUND',
      408: 'TIMEOUT',
      413: 'PAYLOAD_TOO_LARGE',
      422: 'VALIDATION_ERROR',
      429: 'RATE_LIMITED',
    });
    for (const [status, code] of Object.entries(STATUS_CODES))
      expect(codeForStatus(Number(status))).toBe(code);
  });

  it('maps every 5xx to SERVER_ERROR and other statuses to HTTP_ERROR', () => {
    for (const status of [500, 501, 502, 503, 504, 599])
      expect(codeForStatus(status)).toBe('SERVER_ERROR');
    for (const status of [302, 405, 409, 418, 451, 600])
      expect(codeForStatus(status)).toBe('HTTP_ERROR');
  });
});
