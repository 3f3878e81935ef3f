import type { UserOrderKey } from '@churn-risk/core/store';
import { createHash, randomUUID } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './connection.js';

// Order per user (`TakeOptions.perUser`) on keys of our own, next to BullMQ's. BullMQ has no
// groups, so a take still goes through BullMQ (`getNextJob`, a completion's `fetchNext`), and a
// script on these keys decides, atomically, whether the job it handed out is its user's turn:
//
// - `<prefix>:order:line:<user>`: the user's line, a sorted set of its unfinished jobs (waiting,
//   parked, delayed for a retry, active) scored by the alert's `triggeredAt` in ms. Equal times
//   sort by job id, and an ordered alert's job id starts with its acceptance time, so the first
//   accepted goes first. Written with the job, in the MULTI of the accept. The alert that holds
//   the user, from its take until it completes or fails for good (a retry's delay and a takeover
//   keep it), is scored -1: first of the line whatever comes later.
// - `<prefix>:order:newest:<user>`: the newest `triggeredAt` accepted for the user, kept
//   `dedupeTtlMs` after each acceptance (as the identities are).
// - `<prefix>:order:parks` (hash: job id → how often it was parked) and `<prefix>:order:parked`
//   (set: the jobs parked now).
//
// A job handed out that is not its user's turn is parked: moved to BullMQ's delayed set with the
// public `moveToDelayed` for at most `leaseMs` (so a lost wake-up never strands it), and the
// completion or failure of the alert that holds the user promotes the user's next parked job
// (`promote`). Every key carries the queue's prefix, so with a hash tag (`{churn-risk}`) they all
// land in the queue's slot of a Redis Cluster. The job hash is read only for whether it exists
// (`queue.toKey(id)`): a job removed with BullMQ's own tools neither holds its user nor blocks its
// line.

/** Whether `error` is Redis' answer to a script it does not know. */
export function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/**
 * A Lua script run by its SHA1, sent in full once Redis does not know it (NOSCRIPT). Each call is
 * written at once: holding the writes of one tick back to send them together (a cork) saved
 * system calls but made every consumer's take wait for the others, so that Node and Redis worked
 * in turns instead of side by side (`pnpm bench drain`, in order per user: 0.51x the drain
 * without order with the cork, 0.72x without it, in back-to-back runs).
 */
class Script {
  readonly sha: string;
  constructor(readonly text: string) {
    this.sha = createHash('sha1').update(text).digest('hex');
  }

  run(client: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> {
    return client.evalsha(this.sha, keys.length, ...keys, ...args).catch((error: unknown) => {
      if (!isNoScript(error)) throw error;
      return client.eval(this.text, keys.length, ...keys, ...args);
    });
  }
}

/**
 * Run in the MULTI of the accept, right after BullMQ's add: records the alert in its user's line
 * and the user's newest time, only when the add stored our job (a duplicate stores none).
 * KEYS: job hash, line, newest. ARGV: job id, at (ms), dedupeTtlMs. 1: recorded; 0: a duplicate.
 */
const ACCEPT_IN_LINE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
local newest = tonumber(redis.call('GET', KEYS[3]))
if newest == nil or tonumber(ARGV[2]) > newest then
  redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3])
else
  redis.call('PEXPIRE', KEYS[3], ARGV[3])
end
return 1`;

/**
 * The end of one alert and the per-user take of the next, in one step (either may be absent):
 *
 * - the end (after BullMQ's move to completed or failed went through): the job leaves its line,
 *   which releases its user when it held it, and the user's first job is answered when it is
 *   parked (to promote);
 * - the take of the job BullMQ just handed out (active, locked): whether it is its user's turn,
 *   and if so the hold (its score in the line becomes -1). Its turn: it is the first of its line,
 *   that is it holds its user already (a retry due again, a takeover), or the user is not held
 *   and it has the oldest time. Otherwise it is to be parked (counted here). A first of the line
 *   that is finished (completed, failed or gone: its end was not recorded here, its process died
 *   right after BullMQ's move) is dropped; a job missing from its line is put back in it.
 *
 * - and, for the job parked right before (the take of `moveToDelayed`'s `fetchNext`), whether
 *   it is first of its line by now (its holder ended meanwhile, and its promote came too soon).
 *
 * KEYS: BullMQ's completed and failed sets, parks, parked, the ending alert's line, the taken
 * job's line and newest, the line of the job parked before (keys of an absent part: any of the
 * queue's).
 * ARGV: ending job id (or ''), '1' when it was parked before its take, taken job id (or ''), its
 * at, the job key prefix, the job parked before (or '').
 * `{wake, took, parks, newest, again}`: `wake` the job id to promote, or ''; `took` 1 when the job
 * is taken and holds its user, 0 when it is to be parked, -1 when there was nothing to take;
 * `again` 1 when the job parked before is to be promoted.
 */
const TURN = `
local again = 0
if ARGV[6] ~= '' and redis.call('ZRANGE', KEYS[8], 0, 0)[1] == ARGV[6] then again = 1 end
local wake = ''
local ended = ARGV[1]
if ended ~= '' then
  redis.call('ZREM', KEYS[5], ended)
  if ARGV[2] == '1' then redis.call('HDEL', KEYS[3], ended) end
  local top = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
  if top[1] and tonumber(top[2]) >= 0 and redis.call('SISMEMBER', KEYS[4], top[1]) == 1 then
    wake = top[1]
  end
end
local id = ARGV[3]
if id == '' then return {wake, -1, 0, 0, again} end
local jobs = ARGV[5]
local healed = false
local held = false
while true do
  local top = redis.call('ZRANGE', KEYS[6], 0, 0, 'WITHSCORES')
  local first = top[1]
  if first == id then
    held = tonumber(top[2]) < 0
    break
  end
  if first and (redis.call('EXISTS', jobs .. first) == 0 or redis.call('ZSCORE', KEYS[1], first)
      or redis.call('ZSCORE', KEYS[2], first)) then
    redis.call('ZREM', KEYS[6], first)
  elseif not healed then
    healed = true
    redis.call('ZADD', KEYS[6], 'NX', ARGV[4], id)
  else
    redis.call('SADD', KEYS[4], id)
    redis.call('HINCRBY', KEYS[3], id, 1)
    return {wake, 0, 0, 0, again}
  end
end
if not held then redis.call('ZADD', KEYS[6], 'XX', -1, id) end
local parks = tonumber(redis.call('HGET', KEYS[3], id)) or 0
if parks > 0 then redis.call('SREM', KEYS[4], id) end
local newest = tonumber(redis.call('GET', KEYS[7]))
if newest == nil or tonumber(ARGV[4]) > newest then newest = tonumber(ARGV[4]) end
return {wake, 1, parks, newest, again}`;

/**
 * After a park: whether the parked job is its user's turn by now (the holder ended between the
 * decision and the move, and its promote found the job not delayed yet). KEYS: line. ARGV: job
 * id. 1: promote it.
 */
const TURN_AFTER_PARK = `
if redis.call('ZRANGE', KEYS[1], 0, 0)[1] == ARGV[1] then return 1 end
return 0`;

const acceptInLine = new Script(ACCEPT_IN_LINE);
const turn = new Script(TURN);
const turnAfterPark = new Script(TURN_AFTER_PARK);

/** A per-user take's answer when it is the alert's turn. */
export interface Turn {
  /** How often the job was parked: takes that were not tries. */
  parks: number;
  /** The newest `triggeredAt` accepted for the user, in ms (the alert's own at least). */
  newest: number;
}

let lastMs = 0;
let sameMs = 0;

/**
 * The job id of an alert accepted in order: its acceptance time first (then a counter within the
 * millisecond), so that in a line, where equal times sort by job id, the first accepted goes first.
 */
export function orderedJobId(): string {
  const now = Date.now();
  sameMs = now === lastMs ? sameMs + 1 : 0;
  lastMs = now;
  return `${now.toString(36).padStart(9, '0')}${sameMs.toString(36).padStart(4, '0')}-${randomUUID()}`;
}

/** The order keys of one queue (`prefix`) and the scripts on them. */
export class UserOrder {
  readonly #base: string;
  readonly #completed: string;
  readonly #failed: string;

  /** `prefix`: the store's; `keys`: BullMQ's completed and failed sets (`queue.toKey(type)`). */
  constructor(prefix: string, keys: { completed: string; failed: string }) {
    this.#base = `${prefix}:order`;
    this.#completed = keys.completed;
    this.#failed = keys.failed;
  }

  /** The key of `user`'s line (`retry` of a failed alert puts it back there). */
  lineKey(user: string): string {
    return `${this.#base}:line:${user}`;
  }

  /**
   * Queues, in the accept's MULTI right after BullMQ's add, the record of the alert's order (by
   * the script's SHA1: `acceptAlone` runs it when Redis answers NOSCRIPT).
   */
  queueAccept(
    multi: ChainableCommander,
    jobKey: string,
    jobId: string,
    order: UserOrderKey,
    dedupeTtlMs: number,
  ): void {
    multi.evalsha(
      acceptInLine.sha,
      3,
      ...this.#acceptKeys(jobKey, order),
      jobId,
      order.at,
      dedupeTtlMs,
    );
  }

  /**
   * The record of `queueAccept` on its own, for a MULTI whose script Redis did not know (its
   * script cache was just flushed or restarted): the job is stored by then, and the record follows.
   */
  async acceptAlone(
    client: RedisClient,
    jobKey: string,
    jobId: string,
    order: UserOrderKey,
    dedupeTtlMs: number,
  ): Promise<void> {
    await acceptInLine.run(client, this.#acceptKeys(jobKey, order), [jobId, order.at, dedupeTtlMs]);
  }

  #acceptKeys(jobKey: string, order: UserOrderKey): string[] {
    return [jobKey, this.lineKey(order.user), `${this.#base}:newest:${order.user}`];
  }

  /**
   * The end of `ended` (after BullMQ's move; `parked`: it was parked before its take) and the
   * per-user take of `taken` (the job BullMQ just handed out: if it is its user's turn, it holds
   * its user from now on), in one script, either may be absent. `wake`: the job id of a parked job
   * to promote; `turn`: the take's answer (undefined: park the job); `again`: whether
   * `parkedBefore`, the job parked right before, is its user's turn by now (promote it).
   */
  turn(
    client: RedisClient,
    jobKeyPrefix: string,
    ended: { id: string; order: UserOrderKey; parked: boolean } | undefined,
    taken: { id: string; order: UserOrderKey } | undefined,
    parkedBefore?: { id: string; order: UserOrderKey },
  ): Promise<{ wake: string | undefined; turn: Turn | undefined; again: boolean }> {
    const parks = `${this.#base}:parks`;
    return turn
      .run(
        client,
        [
          this.#completed,
          this.#failed,
          parks,
          `${this.#base}:parked`,
          ended === undefined ? parks : this.lineKey(ended.order.user),
          taken === undefined ? parks : this.lineKey(taken.order.user),
          taken === undefined ? parks : `${this.#base}:newest:${taken.order.user}`,
          parkedBefore === undefined ? parks : this.lineKey(parkedBefore.order.user),
        ],
        [
          ended?.id ?? '',
          ended?.parked === true ? '1' : '',
          taken?.id ?? '',
          taken?.order.at ?? 0,
          jobKeyPrefix,
          parkedBefore?.id ?? '',
        ],
      )
      .then((answer) => {
        const [wake, took, parked, newest, again] = answer as [
          string,
          number,
          number,
          number,
          number,
        ];
        return {
          wake: wake === '' ? undefined : wake,
          turn: took === 1 ? { parks: parked, newest } : undefined,
          again: again === 1,
        };
      });
  }

  /** Whether a job just parked is its user's turn by now (then promote it). */
  async turnAfterPark(client: RedisClient, jobId: string, order: UserOrderKey): Promise<boolean> {
    const { user } = order;
    const answer = await turnAfterPark.run(client, [this.lineKey(user)], [jobId]);
    return answer === 1;
  }
}
