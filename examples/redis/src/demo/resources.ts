import type { RedisQueue } from '@churn-risk/redis';
import type { RedisServer } from '@churn-risk/redis/testing';
import type { Sandbox } from '@churn-risk/sandbox';
import { rmSync } from 'node:fs';
import type { Child } from './child-process.js';

/**
 * Everything the demo starts, so that every process and server is stopped on the way out, also
 * after a failure (`close`) or on an abrupt exit (`killNow`, from `process.on('exit')`).
 */
export class Resources {
  readonly children: Child[] = [];
  redis: RedisServer | undefined;
  sandbox: Sandbox | undefined;
  /** A queue handle the demo only reads counts from. */
  observer: RedisQueue | undefined;
  /** Temporary folder (the worker's store file). */
  dir: string | undefined;

  track(child: Child): Child {
    this.children.push(child);
    return child;
  }

  /** Stops the children (SIGTERM, SIGKILL after 5 s), the sandbox and Redis; removes the folder. */
  async close(): Promise<void> {
    await Promise.all(this.children.map((child) => child.stop('SIGTERM', 5000)));
    await this.observer?.close().catch(() => undefined);
    await this.sandbox?.close().catch(() => undefined);
    await this.redis?.stop().catch(() => undefined);
    this.redis?.cleanup();
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
    this.redis = undefined;
    this.dir = undefined;
  }

  /** Synchronous last resort: SIGKILL whatever still runs. */
  killNow(): void {
    for (const child of this.children) {
      if (child.running()) process.kill(child.pid, 'SIGKILL');
    }
    try {
      this.redis?.signal('SIGKILL');
    } catch {
      // already gone
    }
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
  }
}
