import type { BenchChild } from './child.js';

/**
 * Every IPC message a child sends, kept until taken by its key (`{ done: ... }` is taken by
 * `take('done')`), so that a message that arrives before anyone waits for it is not lost. A
 * `{ error }` message, or the child's exit, rejects the waits.
 */
export interface Mailbox {
  /** Resolves with the value of the first message that has `key` (rejects after `timeoutMs`). */
  take<T>(key: string, timeoutMs: number): Promise<T>;
  /** Stops listening. */
  close(): void;
}

type Message = Record<string, unknown>;

/** What `take` rejects with when nothing came in time (the child may still be working). */
export class MailTimeoutError extends Error {
  override readonly name = 'MailTimeoutError';
}

export function mailbox(child: BenchChild<unknown>, name: string): Mailbox {
  const kept: Message[] = [];
  let failure: Error | undefined;
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const waiter of waiters) waiter();
  };
  const onMessage = (message: unknown): void => {
    if (typeof message !== 'object' || message === null) return;
    const record = message as Message;
    if (typeof record.error === 'string') failure ??= new Error(`${name}: ${record.error}`);
    kept.push(record);
    wake();
  };
  const onExit = (code: number | null, signal: string | null): void => {
    failure ??= new Error(`${name} exited (${signal ?? `code ${String(code)}`})`);
    wake();
  };
  child.process.on('message', onMessage);
  child.process.on('exit', onExit);
  return {
    take<T>(key: string, timeoutMs: number): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const check = (): void => {
          const at = kept.findIndex((message) => key in message);
          if (at >= 0) {
            const [message] = kept.splice(at, 1);
            done();
            resolve((message as Message)[key] as T);
          } else if (failure !== undefined) {
            done();
            reject(failure);
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new MailTimeoutError(`${name}: no "${key}" within ${String(timeoutMs / 1000)} s`));
        }, timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    close(): void {
      child.process.off('message', onMessage);
      child.process.off('exit', onExit);
    },
  };
}
