import type { Logger } from '@churn-risk/core';

/** A logger that writes nothing, for tests whose receivers would log failures they cause. */
export const quietLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
