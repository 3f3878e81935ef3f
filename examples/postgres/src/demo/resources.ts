import type { PostgresServer } from '@churn-risk/postgres/testing';
import type { Sandbox } from '@churn-risk/sandbox';
import { rmSync } from 'node:fs';
import type { Child } from './child-process.js';

/**
 * Everything the demo starts, so that every process and server is stopped on the way out, also
 * after a failure (`close`) or on an abrupt exit (`killNow`, from `process.on('exit')`).
 */
export class Resources {
  readonly children: Child[] = [];
  postgres: PostgresServer | undefined;
  sandbox: Sandbox | undefined;
  /** Temporary folder (the worker's store file). */
  dir: string | undefined;

  track(child: Child): Child {
    this.children.push(child);
    return child;
  }

  /** Stops the children (SIGTERM, SIGKILL after 5 s), the sandbox and Postgres; removes folders. */
  async close(): Promise<void> {
    await Promise.all(this.children.map((child) => child.stop('SIGTERM', 5000)));
    await this.sandbox?.close().catch(() => undefined);
    await this.postgres?.stop().catch(() => undefined);
    this.postgres?.cleanup();
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
    this.postgres = undefined;
    this.dir = undefined;
  }

  /** Synchronous last resort: SIGKILL whatever still runs. */
  killNow(): void {
    for (const child of this.children) {
      if (child.running()) process.kill(child.pid, 'SIGKILL');
    }
    const pid = this.postgres?.pid ?? 0;
    if (pid > 0) {
      try {
        process.kill(pid, 'SIGKILL'); // the postmaster; its backends exit with it
      } catch {
        // already gone
      }
    }
    this.postgres?.cleanup();
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
  }
}
