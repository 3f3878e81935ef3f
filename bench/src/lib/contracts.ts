/**
 * The parts of the packages' public APIs (SPEC sections 4 to 8) that the benchmarks use, typed
 * here because some of them are still being written (see optional.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface ReceiverResultLike {
  status: number;
  headers: Record<string, string>;
  body: string;
  done: Promise<void>;
}

export interface ReceiverLike {
  on(name: 'churn_risk_alert', handler: (alert: unknown, context: unknown) => unknown): unknown;
  handle(request: {
    method: string;
    headers: Record<string, string>;
    body: Uint8Array | string;
  }): Promise<ReceiverResultLike>;
  node?: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  readonly maxBodyBytes: number;
  readonly stats?: { queued: number; running: number; accepted: number };
  close?(options?: { timeoutMs?: number }): Promise<void>;
}

export type CreateReceiver = (options: Record<string, unknown>) => ReceiverLike;

export interface BatcherLike {
  push(item: Record<string, unknown>): void;
  flush(): Promise<number>;
  destroy(): Promise<void>;
}

export interface ClientLike {
  createBatcher(options?: Record<string, unknown>): BatcherLike;
}

export type ClientConstructor = new (options: Record<string, unknown>) => ClientLike;

export type CreateSandbox = (options?: Record<string, unknown>) => unknown;
