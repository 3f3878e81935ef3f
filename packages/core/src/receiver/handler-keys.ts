import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

/**
 * A key per handler that names the same handler in another process or after a deploy, so that a
 * durable queue can record which handlers succeeded for an alert and skip only those on a retry.
 *
 * The key is a hash of the handler's source text and its rank among the handlers with the same
 * source (`<16 hex digits>.<rank>`). A handler whose code changed, or that was not registered when
 * the alert was first tried, gets a key that was never recorded, so it runs: a change can make a
 * handler run again, never skip one. Handlers added or removed around it do not change its key.
 * Bound and native functions all have the same source text and are told apart by their order.
 */
export function handlerKeys(handlers: readonly ((...args: never[]) => unknown)[]): string[] {
  const seen = new Map<string, number>();
  return handlers.map((handler) => {
    const source = Function.prototype.toString.call(handler);
    const hash = bytesToHex(sha256(utf8ToBytes(source))).slice(0, 16);
    const rank = seen.get(hash) ?? 0;
    seen.set(hash, rank + 1);
    return `${hash}.${String(rank)}`;
  });
}
