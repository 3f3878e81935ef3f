import type { Sandbox } from '@churn-risk/sandbox';
import { rmSync } from 'node:fs';
import type { DemoServer } from './backend.js';
import type { Child } from './child-process.js';

/**
 * Everything the demo starts, so that every process and server is stopped on the way out, also
 * after a failure (`close`) or on an abrupt exit (`killNow`, from `process.on('exit')`).
 */
export class Resources {
  readonly children: Child[] = [];
  /** The back end's server (Redis, PostgreSQL). */
  server: DemoServer | undefined;
  sandbox: Sandbox | undefined;
  /** Temporary folder (the worker's store file). */
  dir: string | undefined;

  track(child: Child): Child {
    this.children.push(child);
    return child;
  }

  /** Stops the children (SIGTERM, SIGKILL after 5 s), the sandbox and the server; removes folders. */
  async close(): Promise<void> {
    await Promise.all(this.children.map((child) => child.stop('SIGTERM', 5000)));
    await this.sandbox?.close().catch(() => undefined);
    await this.server?.stop().catch(() => undefined);
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
    this.server = undefined;
    this.dir = undefined;
  }

  /** Synchronous last resort: SIGKILL whatever still runs. */
  killNow(): void {
    for (const child of this.children) {
      if (child.running()) process.kill(child.pid, 'SIGKILL');
    }
    this.server?.kill();
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
  }
}
